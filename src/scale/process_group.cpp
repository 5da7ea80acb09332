#include "ncclbot/scale/process_group.hpp"

namespace ncclbot {

namespace {
ProcessGroupFactory& factory_slot() {
  static ProcessGroupFactory factory = nullptr;
  return factory;
}
}  // namespace

bool set_process_group_factory(ProcessGroupFactory factory) {
  factory_slot() = factory;
  return true;
}

ProcessGroup* process_group() {
  static ProcessGroup* group = factory_slot() ? factory_slot()() : nullptr;
  return group;
}

}  // namespace ncclbot
