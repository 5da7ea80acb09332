// The plugin's own ABI declarations against the layout NCCL 2.27-2.30 reads. Expected sizes and
// offsets are computed by hand from the field lists in docs/plugin.md "NCCL's ABI, as ncclbot
// declares it", i.e. the field order of NCCL's profiler_v4.h to profiler_v6.h and tuner_v5.h /
// tuner_v6.h (x86-64 LP64: pointers and size_t 8 bytes, int 4, natural alignment), not printed by
// the code under test.
#include <gtest/gtest.h>

#include <cstddef>

#include "plugin/nccl_abi.hpp"

TEST(AbiLayout, TunerStructsAreFourPointers) {
  EXPECT_EQ(sizeof(NcclTunerV5), 32u);  // name, init, getCollInfo, finalize
  EXPECT_EQ(offsetof(NcclTunerV5, getCollInfo), 16u);
  EXPECT_EQ(offsetof(NcclTunerV5, finalize), 24u);
  EXPECT_EQ(sizeof(NcclTunerV4), 32u);
  EXPECT_EQ(sizeof(NcclTunerV3), 32u);
  EXPECT_EQ(sizeof(NcclTunerV2), 32u);
}

// NCCL 2.30's tuner_v6.h: v5's four members, then getChunkSize.
TEST(AbiLayout, TunerV6AppendsGetChunkSize) {
  EXPECT_EQ(sizeof(NcclTunerV6), 40u);
  EXPECT_EQ(offsetof(NcclTunerV6, init), 8u);
  EXPECT_EQ(offsetof(NcclTunerV6, getCollInfo), 16u);
  EXPECT_EQ(offsetof(NcclTunerV6, finalize), 24u);
  EXPECT_EQ(offsetof(NcclTunerV6, getChunkSize), 32u);
}

TEST(AbiLayout, TunerConstantsV5) {
  // 7*3 + 3*7*3 + 5 tables of 4*3 doubles = 21 + 63 + 60 = 144 doubles.
  EXPECT_EQ(sizeof(NcclTunerConstantsV5), 144u * 8u);
  EXPECT_EQ(offsetof(NcclTunerConstantsV5, hwLatencies), 21u * 8u);
  EXPECT_EQ(offsetof(NcclTunerConstantsV5, llMaxBws), 84u * 8u);
  EXPECT_EQ(offsetof(NcclTunerConstantsV5, perChMaxRingLL128Bws), 96u * 8u);
  EXPECT_EQ(offsetof(NcclTunerConstantsV5, perChMaxTreeLL128Bws), 108u * 8u);
  EXPECT_EQ(offsetof(NcclTunerConstantsV5, perChMaxTreeBws), 120u * 8u);
  EXPECT_EQ(offsetof(NcclTunerConstantsV5, perChMaxNVLSTreeBws), 132u * 8u);
  EXPECT_EQ(sizeof(NcclNvlDomainInfoV5), 12u);
}

TEST(AbiLayout, ProfilerStructsAreSixPointers) {
  EXPECT_EQ(sizeof(NcclProfilerV5), 48u);
  EXPECT_EQ(offsetof(NcclProfilerV5, startEvent), 16u);
  EXPECT_EQ(offsetof(NcclProfilerV5, recordEventState), 32u);
  EXPECT_EQ(sizeof(NcclProfilerV4), 48u);
}

TEST(AbiLayout, ProfilerDescriptorV5) {
  // type u64 @0, parentObj @8, rank @16, union @24 (8-aligned). The collective member is the
  // largest: seqNumber 0, func 8, sendBuff 16, recvBuff 24, count 32, root 40, datatype 48,
  // nChannels 56, nWarps 57, algo 64, proto 72, parentGroup 80 -> 88 bytes; 24 + 88 = 112.
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, parentObj), 8u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, rank), 16u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, coll), 24u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, coll) + offsetof(NcclProfileCollV5, count), 56u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, coll) + offsetof(NcclProfileCollV5, datatype), 72u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, coll) + offsetof(NcclProfileCollV5, nChannels), 80u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, coll) + offsetof(NcclProfileCollV5, algo), 88u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, coll) + offsetof(NcclProfileCollV5, proto), 96u);
  EXPECT_EQ(sizeof(NcclProfilerEventDescrV5), 112u);
  // KernelCh: channelId u8 @24, pTimer u64 @32.
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, kernelCh) + offsetof(NcclProfileKernelCh, channelId), 24u);
  // CollApi (profiler_v5.h): func 0, count 8, datatype 16, root 24, stream 32, graphCaptured 40
  // -> 48 bytes; graphCaptured at 24 + 40 = 64 in the descriptor, in v5 and v6 alike.
  EXPECT_EQ(sizeof(NcclProfileCollApiV5), 48u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, collApi) + offsetof(NcclProfileCollApiV5, graphCaptured), 64u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV6, collApi) + offsetof(NcclProfileCollApiV5, graphCaptured), 64u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV5, kernelCh) + offsetof(NcclProfileKernelCh, pTimer), 32u);
}

TEST(AbiLayout, ProfilerDescriptorV6) {
  // NCCL 2.29's profiler_v6.h: v5's members at v5's offsets, plus ceColl: seqNumber 0, func 8,
  // sendBuff 16, recvBuff 24, count 32, root 40, datatype 48, syncStrategy 56, intraBatchSync 64,
  // batchSize 68, numBatches 72, ceSeqNum 76, stream 80 -> 88 bytes, as large as coll: still 112.
  EXPECT_EQ(sizeof(NcclProfileCeCollV6), 88u);
  EXPECT_EQ(offsetof(NcclProfileCeCollV6, count), 32u);
  EXPECT_EQ(offsetof(NcclProfileCeCollV6, datatype), 48u);
  EXPECT_EQ(offsetof(NcclProfileCeCollV6, intraBatchSync), 64u);
  EXPECT_EQ(offsetof(NcclProfileCeCollV6, batchSize), 68u);
  EXPECT_EQ(offsetof(NcclProfileCeCollV6, ceSeqNum), 76u);
  EXPECT_EQ(offsetof(NcclProfileCeCollV6, stream), 80u);
  EXPECT_EQ(sizeof(NcclProfilerEventDescrV6), 112u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV6, coll), 24u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV6, ceColl), 24u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV6, coll) + offsetof(NcclProfileCollV5, proto), 96u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV6, kernelCh) + offsetof(NcclProfileKernelCh, pTimer), 32u);
  EXPECT_EQ(sizeof(NcclProfilerV6), 48u);
  EXPECT_EQ(offsetof(NcclProfilerV6, startEvent), 16u);
  EXPECT_EQ(offsetof(NcclProfilerV6, recordEventState), 32u);
}

TEST(AbiLayout, ProfilerDescriptorV7) {
  // The released NCCL 2.32.3 library's own debug information (pip nvidia-nccl-cu13 2.32.3):
  //   gdb -batch -ex 'ptype /o ncclProfilerEventDescr_v7_t' -ex 'ptype /o ncclProfiler_v7_t'
  //       .../site-packages/nvidia/nccl/lib/libnccl.so.2   (one command line)
  // coll: kernelVariant @112, isSymColl @120, userTag @128, 112 bytes; collApi: graphCaptured @64,
  // userTag @72; ceColl: userTag @112 (96 bytes); kernelCh: pTimer @32; the descriptor 136 bytes.
  constexpr size_t coll = offsetof(NcclProfilerEventDescrV7, coll);
  constexpr size_t api = offsetof(NcclProfilerEventDescrV7, collApi);
  const struct {
    const char* field;
    size_t offset, expected;
  } fields[] = {
      {"coll", coll, 24},
      {"coll.nChannels", coll + offsetof(NcclProfileCollV5, nChannels), 80},
      {"coll.algo", coll + offsetof(NcclProfileCollV5, algo), 88},
      {"coll.proto", coll + offsetof(NcclProfileCollV5, proto), 96},
      {"coll.parentGroup", coll + offsetof(NcclProfileCollV5, parentGroup), 104},
      {"coll.kernelVariant", coll + offsetof(NcclProfileCollV7, kernelVariant), 112},
      {"coll.isSymColl", coll + offsetof(NcclProfileCollV7, isSymColl), 120},
      {"coll.userTag", coll + offsetof(NcclProfileCollV7, userTag), 128},
      {"collApi.graphCaptured", api + offsetof(NcclProfileCollApiV5, graphCaptured), 64},
      {"collApi.userTag", api + offsetof(NcclProfileCollApiV7, userTag), 72},
      {"ceColl.userTag", offsetof(NcclProfilerEventDescrV7, ceColl) + offsetof(NcclProfileCeCollV7, userTag),
       112},
      {"kernelCh.pTimer",
       offsetof(NcclProfilerEventDescrV7, kernelCh) + offsetof(NcclProfileKernelCh, pTimer), 32},
      {"sizeof descriptor", sizeof(NcclProfilerEventDescrV7), 136},
      {"sizeof coll", sizeof(NcclProfileCollV7), 112},
      {"sizeof ceColl", sizeof(NcclProfileCeCollV7), 96},
      {"sizeof table", sizeof(NcclProfilerV7), 48},
      {"table.startEvent", offsetof(NcclProfilerV7, startEvent), 16},
      {"table.recordEventState", offsetof(NcclProfilerV7, recordEventState), 32},
  };
  for (const auto& f : fields) EXPECT_EQ(f.offset, f.expected) << f.field;
}

TEST(AbiLayout, ProfilerDescriptorV4) {
  // type is a u8 in v4 but parentObj stays 8-aligned @8; the collective member lacks parentGroup
  // (80 bytes), so the descriptor is 24 + 80 = 104 bytes.
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV4, parentObj), 8u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV4, coll), 24u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV4, coll) + offsetof(NcclProfileCollV4, proto), 96u);
  EXPECT_EQ(sizeof(NcclProfilerEventDescrV4), 104u);
  EXPECT_EQ(offsetof(NcclProfilerEventDescrV4, kernelCh) + offsetof(NcclProfileKernelCh, pTimer), 32u);
}

TEST(AbiLayout, StateArgsCarryTheStopTimerFirst) {
  EXPECT_EQ(sizeof(NcclProfilerEventStateArgs), 8u);
  EXPECT_EQ(offsetof(NcclProfilerEventStateArgs, kernelCh), 0u);
}

TEST(AbiLayout, EnumValues) {
  EXPECT_EQ(kNcclProfileColl, 2u);
  EXPECT_EQ(kNcclProfileKernelCh, 64u);
  EXPECT_EQ(kNcclProfileCeColl, 4096u);  // 1 << 12
  EXPECT_EQ(kNcclProfileCollApi, 512u);  // 1 << 9; the same in 2.32.3 (gdb: print (int)ncclProfileCollApi)
  EXPECT_EQ(kNcclProfilerKernelChStop, 22);
  EXPECT_EQ(kNcclLogTuning, 0x40ul);
  EXPECT_EQ(kNcclLogWarn, 2);
  EXPECT_EQ(kNcclLogInfo, 3);
}
