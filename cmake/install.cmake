# `cmake --install BUILD --prefix P` (docs/install.md): a relocatable tree
#   P/bin/ncclbot, P/bin/ncclbot-mpi          the programs (they find P/share/ncclbot from P/bin)
#   P/lib/libnccl-tuner-ncclbot.so            the NCCL tuner + profiler plugin
#   P/share/ncclbot/{fabrics,hipipe,experiments,scripts}
#   P/include/ncclbot, P/lib/libncclbot*.a    the public headers and the library
#   P/lib/cmake/ncclbot                       find_package(ncclbot): ncclbot::policy, ncclbot::ncclbot
include(CMakePackageConfigHelpers)

install(TARGETS ncclbot RUNTIME DESTINATION bin)
if(TARGET ncclbot-mpi)
  install(TARGETS ncclbot-mpi RUNTIME DESTINATION bin)
endif()
if(TARGET nccl_tuner_ncclbot)
  install(TARGETS nccl_tuner_ncclbot LIBRARY DESTINATION lib)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/install_data.cmake)
ncclbot_install_data(share/ncclbot Unspecified)

# The library and its public headers (include/ncclbot only: src/ stays private).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ncclbot DESTINATION include)
set(NCCLBOT_EXPORTED ncclbot_shared ncclbot_lib ncclbot_policy)
if(TARGET ncclbot_kernels)
  list(APPEND NCCLBOT_EXPORTED ncclbot_kernels)
endif()
set_target_properties(ncclbot_lib PROPERTIES OUTPUT_NAME ncclbot)
install(TARGETS ${NCCLBOT_EXPORTED} EXPORT ncclbotTargets ARCHIVE DESTINATION lib)
install(EXPORT ncclbotTargets NAMESPACE ncclbot:: DESTINATION lib/cmake/ncclbot)
set(NCCLBOT_CONFIG_HAVE_CUDA ${NCCLBOT_HAVE_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ncclbotConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ncclbotConfig.cmake INSTALL_DESTINATION lib/cmake/ncclbot)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ncclbotConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ncclbotConfig.cmake ${PROJECT_BINARY_DIR}/ncclbotConfigVersion.cmake
        DESTINATION lib/cmake/ncclbot)
