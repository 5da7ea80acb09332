# The data the programs find from where they are (io/resource_paths.hpp), into DEST; the Python
# package installs the same set beside its module (python/CMakeLists.txt).
function(ncclbot_install_data dest component)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/fabrics ${PROJECT_SOURCE_DIR}/data/hipipe
                    ${PROJECT_SOURCE_DIR}/experiments DESTINATION ${dest} COMPONENT ${component})
  file(GLOB scripts ${PROJECT_SOURCE_DIR}/scripts/*.py)
  install(PROGRAMS ${scripts} DESTINATION ${dest}/scripts COMPONENT ${component})
endfunction()
