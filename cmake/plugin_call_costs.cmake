# The plugin's measured per-call costs (data/plugin_call_costs.csv, which plugin_overhead_bench
# --write-costs writes) compiled into the library as text, which replay/deployed_cost.cpp parses: a
# new measurement reconfigures and rebuilds, and no installed copy depends on finding the file.
set(NCCLBOT_CALL_COSTS_CSV ${PROJECT_SOURCE_DIR}/data/plugin_call_costs.csv)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${NCCLBOT_CALL_COSTS_CSV})
file(READ ${NCCLBOT_CALL_COSTS_CSV} NCCLBOT_CALL_COSTS_TEXT)
set(NCCLBOT_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)  # for every target compiling deployed_cost.cpp
configure_file(${PROJECT_SOURCE_DIR}/cmake/plugin_call_costs.hpp.in
               ${NCCLBOT_GENERATED_INCLUDE_DIR}/ncclbot_generated/plugin_call_costs.hpp @ONLY)
target_include_directories(ncclbot_lib PRIVATE ${NCCLBOT_GENERATED_INCLUDE_DIR})
