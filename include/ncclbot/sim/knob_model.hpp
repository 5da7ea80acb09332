#pragma once
// The simulator's knob model: how a collective's time changes with the channels and chunk size of an
// arm, relative to the same algorithm and protocol with NCCL's own knobs (whose time is the
// simulator's ground truth, simulator.hpp). NCCL's own choices are transcribed from NCCL v2.30.3-1
// (file:line cited at each function); the time terms and their hidden per-fabric deviations are
// documented, term by term, in docs/simulator.md "Knob model". Everything is a pure function of
// (preset, seed, context, arm).
#include <cstdint>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/context.hpp"
#include "ncclbot/model/topology.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::sim {

// --- What NCCL does with the knobs (NCCL v2.30.3-1) ---

// The communicator's channels for an algorithm: comm->nChannels (ring/tree graph), nvlsChannels for
// NVLSTree and single-node NVLS, min of the two for multi-node NVLS (NCCL src/enqueue.cc:1983-2003).
int nccl_comm_channels(const model::Topology& t, Algo a);
// NCCL's own channel count before scheduling: the ring/tree loop `while (nBytes < nc * nt *
// threadThreshold) nc--` (NCCL src/enqueue.cc:2005-2010) with maxThreads (NCCL src/graph/tuning.cc:239-251)
// and threadThresholds (NCCL src/include/comm.h:49-51, NCCL src/graph/tuning.cc:551-558).
int nccl_channels(const model::Topology& t, Collective c, Algo a, Proto p, uint64_t bytes);
// The channels the scheduler gives one collective asking for `task_channels` of a communicator with
// `comm_channels`: cells of about MinTrafficPerChannel = 32 KiB of traffic (NCCL src/enqueue.cc:582-724;
// 16 KiB before 2.29), so at most about traffic / 32 KiB channels, whatever a tuner asked for.
int scheduled_channels(Collective c, Proto p, uint64_t bytes, int ranks, int task_channels,
                       int comm_channels);
// The largest chunk NCCL lets a tuner set: the protocol's buffer step times chunkSteps, before the
// per-algorithm reductions (bufferMaxChunkSize, NCCL src/enqueue.cc:2139-2146; buffer sizes NCCL
// src/init.cc:781-783).
uint32_t buffer_max_chunk_bytes(Collective c, Algo a, Proto p);
// NCCL's own chunk for one channel moving `channel_bytes` (calcCollChunking, NCCL src/enqueue.cc:2139-2219,
// called per channel with nChannels = 1: NCCL src/enqueue.cc:712-720), aligned to the protocol's grain.
uint32_t nccl_chunk_bytes(const model::Topology& t, Collective c, Algo a, Proto p, uint64_t channel_bytes);
// SMs of one GPU: a channel runs as one CTA on one SM (NCCL src/include/plugin/tuner/tuner_v4.h:37: "number
// of channels (hence SMs)"); H100 SXM5 132 SMs, B200 148 SMs (NVIDIA data sheets).
int gpu_sm_count(model::GpuArch arch);

// What NCCL runs for an arm on a context: equal values mean the same run, hence the same time.
struct EffectiveKnobs {
  int channels = 0;              // channels the collective is split over
  uint32_t chunk_bytes = 0;      // the chunk calcCollChunking settles on (tuner's, clamped and aligned)
  uint64_t run_chunk_bytes = 0;  // the chunk the kernel moves: the last loop shrinks it to what is left
  bool operator==(const EffectiveKnobs&) const = default;
};
EffectiveKnobs effective_knobs(const model::Topology& t, const Context& ctx, const Arm& arm);

// --- The hidden deviations (drawn per preset and seed; ranges in FabricPreset::knobs) ---

struct KnobDeviations {
  double saturation[kNumNcclArms] = {};  // channels that fill the link / the graph's channel count
  double hop_rtt_net_us = 0.0, hop_rtt_nvlink_us = 0.0;
  double fill_share = 0.0;
};
KnobDeviations draw_knob_deviations(const FabricPreset& f, uint64_t seed);

// --- Times ---

// The knob model's estimate of an arm's time with its effective knobs, in the units of the truth
// (us); only its ratio to NCCL's own setting's is used. Exposed for tests.
double knob_model_us(const FabricPreset& f, const KnobDeviations& k, const TruthParts& truth,
                     const Context& ctx, int slot, const EffectiveKnobs& knobs, const EffectiveKnobs& nccl);

// An arm's noise-free time (us): the ground truth of its algorithm and protocol times the knob
// model's ratio of its effective knobs to NCCL's own; exactly the truth when both run the same; NaN
// where the algorithm and protocol cannot run (or the slot is not NCCL's).
double knob_time_us(const FabricPreset& f, const Deviations& d, const KnobDeviations& k, const Context& ctx,
                    const Arm& arm);

// What `synth --knobs` calls: a preset and seed with their deviations drawn once.
class KnobSimulator {
 public:
  KnobSimulator(FabricPreset preset, uint64_t seed);
  const FabricPreset& preset() const { return preset_; }
  double mean_us(const Context& ctx, const Arm& arm) const;
  // Sample r of the arm, with noise drawn as synth draws it (sample_arm_time_us).
  double sample_us(const Context& ctx, const Arm& arm, int r, double mean_us) const;

 private:
  FabricPreset preset_;
  uint64_t seed_;
  Deviations dev_;
  KnobDeviations knob_dev_;
};

}  // namespace ncclbot::sim
