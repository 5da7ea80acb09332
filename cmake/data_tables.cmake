# Data tables the library compiles in as text (data/*.csv), which the library parses at first use: a
# new measurement reconfigures and rebuilds, and no installed copy depends on finding the file.
#   - data/plugin_call_costs.csv: the plugin's measured per-call costs (plugin_overhead_bench
#     --write-costs writes it), parsed by deployed/deployed_cost.cpp;
#   - data/observation_costs.csv: what watching a call costs per NCCL version, with its sources,
#     parsed by deployed/observation_cost.cpp.
set(NCCLBOT_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)  # for every target compiling them

# ncclbot_generated/FILE.hpp with k<ID>Path and k<ID>Csv from data/FILE.csv.
function(ncclbot_compile_data_table FILE ID)
  set(csv ${PROJECT_SOURCE_DIR}/data/${FILE}.csv)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${csv})
  file(READ ${csv} TABLE_TEXT)
  set(TABLE_ID ${ID})
  set(TABLE_FILE ${FILE})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/data_table.hpp.in
                 ${NCCLBOT_GENERATED_INCLUDE_DIR}/ncclbot_generated/${FILE}.hpp @ONLY)
endfunction()

ncclbot_compile_data_table(plugin_call_costs PluginCallCosts)
ncclbot_compile_data_table(observation_costs ObservationCosts)
target_include_directories(ncclbot_lib PRIVATE ${NCCLBOT_GENERATED_INCLUDE_DIR})
