// A HiPIPE preset is read strictly: every key is known, every value lies in the physical range
// docs/hipipe.md states, and a preset at the edges of those ranges still plans quickly.
#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::hipipe {
namespace {

// A two-dimension preset; `nv` and `ib` are the [[dimension]] bodies' value lines.
std::string bounds_preset(const std::string& top, const std::string& nv_bw, const std::string& nv_lat,
                          const std::string& extra_dim_line = "") {
  return "name = \"edge\"\nnodes = 4\ngpus_per_node = 8\n" + top +
         "[[dimension]]\nname = \"nv\"\nspans = \"gpus\"\n" + extra_dim_line + "latency_us = " + nv_lat +
         "\nbandwidth_GBps = " + nv_bw +
         "\nsource = \"x\"\n"
         "[[dimension]]\nname = \"ib\"\nspans = \"nodes\"\nlatency_us = 14.0\nbandwidth_GBps = 47.0\n"
         "source = \"y\"\n";
}

// The InputError reading `text` gives, as "line: message"; "" when the file is accepted.
std::string preset_error(const std::string& text) {
  const std::string path = ::ncclbot::test::temp_dir() + "/edge.toml";
  ::ncclbot::test::write_file(path, text);
  try {
    read_fabric_preset(path);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    return std::to_string(e.line()) + ": " + e.what();
  }
  return "";
}

TEST(HipipePresetBounds, UnknownKeysNameTheirLine) {
  const std::string top = preset_error(bounds_preset("nodez = 8\n", "370.0", "3.4"));
  EXPECT_EQ(top.rfind("4: ", 0), 0u) << top;
  EXPECT_NE(top.find("unknown key 'nodez'"), std::string::npos) << top;
  const std::string dim = preset_error(bounds_preset("", "370.0", "3.4", "colour = 1\n"));
  EXPECT_EQ(dim.rfind("7: ", 0), 0u) << dim;
  EXPECT_NE(dim.find("unknown key 'colour'"), std::string::npos) << dim;
}

TEST(HipipePresetBounds, ValuesOutsideThePhysicalRangeAreRefused) {
  // bandwidth_GBps is on line 8, latency_us on line 7.
  for (const char* bw : {"1e-300", "0.09", "100001", "1e300"}) {
    const std::string e = preset_error(bounds_preset("", bw, "3.4"));
    EXPECT_EQ(e.rfind("8: ", 0), 0u) << bw << ": " << e;
    EXPECT_NE(e.find("bandwidth_GBps must be in [0.1, 1e+05]"), std::string::npos) << e;
  }
  for (const char* lat : {"1e300", "1000001", "-0.5"}) {
    const std::string e = preset_error(bounds_preset("", "370.0", lat));
    EXPECT_EQ(e.rfind("7: ", 0), 0u) << lat << ": " << e;
    EXPECT_NE(e.find("latency_us must be in [0, 1e+06]"), std::string::npos) << e;
  }
  EXPECT_EQ(preset_error(bounds_preset("", "0.1", "1000000")), "");
}

// Both ends of the bandwidth range against a 47 GB/s network, with the latency range's ends: each
// plans with exit 0 (a slow NVLink once made GLPK give up; a stall would end in ctest's timeout,
// since a wall-clock bound here would fail on a loaded machine rather than on a wrong plan).
TEST(HipipePresetBounds, ExtremesOfTheRangesPlan) {
  const std::string dir = ::ncclbot::test::temp_dir();
  for (const char* bw : {"0.1", "0.2", "0.5", "100000"})
    for (const char* lat : {"0", "3.4", "1000000"})
      for (const char* bytes : {"1M", "1G"}) {
        const std::string path = dir + "/edge.toml";
        ::ncclbot::test::write_file(path, bounds_preset("", bw, lat));
        const auto r = ::ncclbot::test::run_cli("hipipe --fabric '" + path + "' --bytes " + bytes);
        EXPECT_EQ(r.exit_code, 0) << bw << " GB/s, " << lat << " us, " << bytes << ": " << r.err;
      }
}

}  // namespace
}  // namespace ncclbot::hipipe
