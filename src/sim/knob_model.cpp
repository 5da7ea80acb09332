#include "ncclbot/sim/knob_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "ncclbot/core/knob_limits.hpp"
#include "sim/sim_random.hpp"

namespace ncclbot::sim {
namespace {

constexpr int kNcclSteps = 8;                         // NCCL_STEPS (NCCL src/include/device.h:26)
constexpr uint64_t kMinTrafficPerChannel = 32 << 10;  // NCCL src/enqueue.cc:582 (2.29+)

uint64_t div_up(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

bool is_nvls(Algo a) {
  return a == Algo::kNvls || a == Algo::kNvlsTree;
}

// Ring patterns (ncclPatternRing, RingTwice) exist for AllReduce, AllGather and ReduceScatter only;
// Ring Broadcast and Reduce run the pipeline patterns (NCCL src/enqueue.cc:2100-2130).
bool ring_pattern(Collective c, Algo a) {
  return a == Algo::kRing &&
         (c == Collective::kAllReduce || c == Collective::kAllGather || c == Collective::kReduceScatter);
}

// comm->maxThreads (NCCL src/graph/tuning.cc:239-251): Ring Simple is 256 only when the ring's bwIntra x
// channels is at most PCI_BW, which no preset has. PAT gets no entry, so 0 (inferred: comm is zeroed).
uint64_t max_threads(Algo a, Proto p) {
  const bool ring_tree = a == Algo::kRing || a == Algo::kTree;
  if (p == Proto::kLL) return ring_tree ? 512 : 0;
  if (p == Proto::kLL128) return ring_tree ? 640 : 0;
  if (ring_tree) return 512;
  return a == Algo::kPat ? 0 : 640;
}

// comm->threadThresholds (NCCL src/include/comm.h:49-51, NCCL src/graph/tuning.cc:551-558).
uint64_t thread_threshold(Algo a, Proto p, int ranks) {
  if (p == Proto::kLL) return a == Algo::kRing ? 8u * uint64_t(ranks) : 8u;
  if (p == Proto::kLL128) return 8;
  return (a == Algo::kCollNetDirect || a == Algo::kCollNetChain) ? 512 : 64;
}

// ncclFuncTrafficPerByte (NCCL src/enqueue.cc:93-100).
uint64_t traffic_per_byte(Collective c, int ranks) {
  if (c == Collective::kAllReduce) return 2;
  if (c == Collective::kAllGather || c == Collective::kReduceScatter) return uint64_t(ranks);
  return 1;
}

// Bytes of one rank's buffer (task->count x element size) for a size in nccl-tests' sense, which
// counts the whole gathered or scattered buffer for AllGather and ReduceScatter.
uint64_t rank_bytes(Collective c, uint64_t bytes, int ranks) {
  if (c == Collective::kAllGather || c == Collective::kReduceScatter)
    return std::max<uint64_t>(1, bytes / uint64_t(ranks));
  return std::max<uint64_t>(1, bytes);
}

int log2_floor(uint64_t x) {
  int r = 0;
  while (x > 1) x >>= 1, ++r;
  return r;
}

// NCCL's per-algorithm reductions of the chunk (calcCollChunking, NCCL src/enqueue.cc:2148-2203), for one
// channel. CollNet's depth loops are left out: no preset enables CollNet.
uint64_t reduce_chunk(const model::Topology& t, Collective c, Algo a, Proto p, uint64_t bytes,
                      uint64_t chunk) {
  const uint64_t heads = uint64_t(t.gpus_per_node);  // nvls.nHeads: one head per local rank (inferred)
  if (a == Algo::kCollNetChain) return std::min<uint64_t>(256 * 1024, chunk);
  if (a == Algo::kNvls) {
    // nvlsChunkSize 128 KiB (NCCL src/transport/nvls.cc:154), then smaller for small sizes.
    chunk = std::min<uint64_t>(chunk, 128 * 1024);
    if (bytes < 64 * heads * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 8 * heads * chunk && chunk > 32768) chunk = 32768;
    if (bytes < 2 * heads * chunk && chunk > 16384) chunk = 16384;
    return chunk;
  }
  if (a == Algo::kNvlsTree) {
    // min(nvlsChunkSize, nvlsTreeMaxChunkSize): 64 KiB from 4 nodes (NCCL src/transport/nvls.cc:221-226;
    // the SM100 multi-node tuning of nvls.cc:211 is not modelled).
    chunk = t.nodes >= 4 ? 65536 : 128 * 1024;
    if (bytes < 32 * heads * chunk && chunk > 262144) chunk = 262144;
    if (bytes < 16 * heads * chunk && chunk > 131072) chunk = 131072;
    if (bytes < 4 * heads * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 1 * heads * chunk && chunk > 32768) chunk = 32768;
    return chunk;
  }
  if (a == Algo::kTree && p == Proto::kLL128) {
    const double ppn = double(t.gpus_per_node);
    const double steps = 1.0 + log2_floor(uint64_t(t.nodes)) + 0.1 * ppn;
    while (double(bytes / chunk) < steps * 64.0 / ppn && chunk > 131072) chunk /= 2;
    while (double(bytes / chunk) < steps * 16.0 / ppn && chunk > 32768) chunk /= 2;
    return chunk;
  }
  if (a == Algo::kPat && (c == Collective::kAllGather || c == Collective::kReduceScatter)) {
    const uint64_t per = c == Collective::kAllGather ? 32 : 16;
    while (chunk * per > bytes && chunk > 65536) chunk /= 2;
  }
  return chunk;
}

uint32_t align_to_grain(uint64_t chunk, Proto p) {
  const uint64_t grain = chunk_grain_bytes(int(p));
  return uint32_t(chunk / grain * grain);  // NCCL src/enqueue.cc:2219
}

// Pipeline stages a chunk crosses after the first (derived from each algorithm's shape): a Ring
// Simple step forwards per slice, half a chunk (sliceSteps / chunkSteps, NCCL
// src/include/collectives.h:19-26); a tree goes up and down ceil(log2(nodes)) network levels (the intra-node
// chain counted as none: an assumption, NVLink hops being several times faster); NVLS reduces then stores;
// PAT has log2(ranks) phases.
double pipeline_stages(const model::Topology& t, Collective c, Algo a, Proto p) {
  const double levels = std::ceil(std::log2(double(std::max(t.nodes, 1))));
  switch (a) {
    case Algo::kRing:
      return (p == Proto::kSimple && ring_pattern(c, a)) ? 0.5 : 1.0;
    case Algo::kTree:
    case Algo::kNvlsTree:
      return std::max(1.0, 2.0 * levels);
    case Algo::kPat:
      return std::max(1.0, std::ceil(std::log2(double(t.ranks()))));
    default:
      return 1.0;
  }
}

}  // namespace

int nccl_comm_channels(const model::Topology& t, Algo a) {
  if (a == Algo::kNvls) return t.nodes > 1 ? std::min(t.nvls_channels, t.ring_channels) : t.nvls_channels;
  if (a == Algo::kNvlsTree) return t.nvls_channels;
  if (a == Algo::kCollNetDirect) return t.collnet_channels;
  return t.ring_channels;
}

int nccl_channels(const model::Topology& t, Collective c, Algo a, Proto p, uint64_t bytes) {
  (void)c;
  int nc = nccl_comm_channels(t, a);
  if (is_nvls(a) || a == Algo::kCollNetDirect) return nc;  // CollNetDirect's own loop: not modelled
  const uint64_t nt = max_threads(a, p);
  const uint64_t threshold = thread_threshold(a, p, t.ranks());
  while (bytes < uint64_t(nc) * nt * threshold && nc >= 2) --nc;
  return nc;
}

int scheduled_channels(Collective c, Proto p, uint64_t bytes, int ranks, int task_channels,
                       int comm_channels) {
  const uint64_t count_bytes = rank_bytes(c, bytes, ranks);
  const uint64_t tpb = traffic_per_byte(c, ranks);
  const uint64_t n_ch = uint64_t(std::max(1, std::min(task_channels, comm_channels)));
  const uint64_t traffic = std::max(kMinTrafficPerChannel, count_bytes * tpb);
  const uint64_t traffic_per_channel = div_up(traffic / n_ch, 16) * 16;
  const uint64_t tpb_cell = tpb * (p == Proto::kLL ? 4 : 1);
  const uint64_t cell_size = div_up(div_up(kMinTrafficPerChannel, tpb_cell), 16) * 16;
  const uint64_t cells = div_up(count_bytes, cell_size);
  const uint64_t traffic_per_cell = cell_size * tpb_cell;
  uint64_t cells_per_channel = std::min(cells, div_up(traffic_per_channel, traffic_per_cell));
  const uint64_t cells_lo = comm_channels == 1 ? cells : cells_per_channel;
  int64_t n_mid = int64_t((cells - cells_lo) / cells_per_channel);
  uint64_t cells_hi = (cells - cells_lo) % cells_per_channel;
  const int64_t n = 1 + n_mid + (cells_hi != 0 ? 1 : 0);
  if (comm_channels < n) {  // more channels than the communicator has: spread over all of them
    n_mid = comm_channels - 2;
    cells_per_channel = (cells - cells_lo) / uint64_t(n_mid + 1);
    cells_hi = cells_per_channel + (cells - cells_lo) % uint64_t(n_mid + 1);
  }
  if (cells_hi == 0 && n_mid != 0) {
    cells_hi = cells_per_channel;
    n_mid -= 1;
  }
  return int(1 + n_mid + (cells_hi != 0 ? 1 : 0));
}

uint32_t buffer_max_chunk_bytes(Collective c, Algo a, Proto p) {
  // Buffers: LL 8 lines x 512 threads x 8 steps x 16 B, LL128 120 x 640 x 8 x 8 B, Simple 4 MiB.
  const uint64_t buff = p == Proto::kLL ? 524288u : p == Proto::kLL128 ? 4915200u : 4194304u;
  const uint64_t step = buff / kNcclSteps;
  const uint64_t chunk_steps = (p == Proto::kSimple && ring_pattern(c, a)) ? kNcclSteps / 2 : 1;
  uint64_t chunk = step * chunk_steps;
  if (p == Proto::kLL) chunk /= 2;
  if (p == Proto::kLL128) chunk = chunk / 16 * 15;  // NCCL_LL128_LINEELEMS 16, DATAELEMS 15
  return uint32_t(chunk);
}

uint32_t nccl_chunk_bytes(const model::Topology& t, Collective c, Algo a, Proto p, uint64_t channel_bytes) {
  const uint64_t chunk = reduce_chunk(t, c, a, p, channel_bytes, buffer_max_chunk_bytes(c, a, p));
  return align_to_grain(chunk, p);
}

int gpu_sm_count(model::GpuArch arch) {
  return arch == model::GpuArch::kBlackwell ? 148 : 132;
}

EffectiveKnobs effective_knobs(const model::Topology& t, const Context& ctx, const Arm& arm) {
  const Algo a = arm.algo;
  const Proto p = arm.proto;
  const int comm = nccl_comm_channels(t, a);
  // A tuner's channels replace NCCL's own after the shrink loop (NCCL src/enqueue.cc:2091); that the
  // communicator has that many (NCCL_MIN_CTAS raised for the sweep) is an assumption.
  const int task = arm.channels == 0 ? nccl_channels(t, ctx.collective, a, p, ctx.bytes) : int(arm.channels);
  EffectiveKnobs e;
  e.channels = scheduled_channels(ctx.collective, p, ctx.bytes, t.ranks(), task, std::max(comm, task));
  const uint64_t channel_bytes = div_up(std::max<uint64_t>(ctx.bytes, 1), uint64_t(e.channels));
  // A tuner's chunk replaces NCCL's, clamped to the buffer's maximum (NCCL src/enqueue.cc:2207-2219).
  e.chunk_bytes =
      arm.chunk_bytes == 0
          ? nccl_chunk_bytes(t, ctx.collective, a, p, channel_bytes)
          : align_to_grain(std::min<uint64_t>(arm.chunk_bytes, buffer_max_chunk_bytes(ctx.collective, a, p)),
                           p);
  // Chunks per loop: nRanks on a ring, nHeads for NVLS (NCCL src/enqueue.cc:2221-2250); the kernel's last
  // loop shrinks the chunk to what is left (NCCL src/device/all_reduce.h:37).
  const uint64_t per_loop = ring_pattern(ctx.collective, a) ? uint64_t(t.ranks())
                            : is_nvls(a)                    ? uint64_t(t.gpus_per_node)
                                                            : 1;
  e.run_chunk_bytes =
      std::max<uint64_t>(1, std::min<uint64_t>(e.chunk_bytes, div_up(channel_bytes, per_loop)));
  return e;
}

KnobDeviations draw_knob_deviations(const FabricPreset& f, uint64_t seed) {
  auto u = [&](uint32_t what) { return random::uniform(seed, f.name, random::kStreamKnobDeviation, what); };
  KnobDeviations k;
  for (int s = 0; s < kNumNcclArms; ++s)
    k.saturation[s] = random::draw(f.knobs.channel_saturation, u(100 + s));
  k.hop_rtt_net_us = random::draw(f.knobs.hop_rtt_net_us, u(1));
  k.hop_rtt_nvlink_us = random::draw(f.knobs.hop_rtt_nvlink_us, u(2));
  k.fill_share = random::draw(f.knobs.fill_share, u(3));
  return k;
}

double knob_model_us(const FabricPreset& f, const KnobDeviations& k, const TruthParts& truth,
                     const Context& ctx, int slot, const EffectiveKnobs& knobs, const EffectiveKnobs& nccl) {
  const model::Topology t = topology_for(f, ctx.nodes, ctx.gpus_per_node);
  const Algo a = slot_algo(slot);
  const double lat = truth.launch_us + truth.slow * truth.latency_us;
  const double volume = truth.slow * double(std::max<uint64_t>(ctx.bytes, 1)) / (truth.bw_gbps * 1000.0);
  const double stages = pipeline_stages(t, ctx.collective, a, slot_proto(slot));
  const double saturating = std::max(1.0, k.saturation[slot] * nccl_comm_channels(t, a));
  // The arm's bandwidth with enough channels to saturate the link: the truth's (NCCL's own channels)
  // scaled up where those channels fall short of saturation.
  const double link = truth.bw_gbps * 1000.0 / std::min(1.0, nccl.channels / saturating);
  const double rtt =
      2.0 * (t.nodes > 1 ? k.hop_rtt_net_us : k.hop_rtt_nvlink_us);  // there and the credit back
  // A channel's share of the link until the channels saturate it, and at most NCCL_STEPS chunks in
  // flight per channel over one hop's round trip.
  auto channel_rate = [&](const EffectiveKnobs& e) {
    const double share = link * std::min(1.0, e.channels / saturating) / e.channels;
    return std::min(share, kNcclSteps * double(e.run_chunk_bytes) / rtt);
  };
  const double bandwidth_term =
      volume * (nccl.channels * channel_rate(nccl)) / (knobs.channels * channel_rate(knobs));
  // Fill: each stage holds what it forwards as a unit at the channel's link share before the flow is
  // steady: a Simple slice, but only one LL line (16 B, ncclLLFifoLine: NCCL src/include/device.h:72) or
  // LL128 line (128 B, NCCL_LL128_LINESIZE, device.h:107), whose flags travel with the data.
  const double unit = slot_proto(slot) == Proto::kLL      ? 16.0
                      : slot_proto(slot) == Proto::kLL128 ? 128.0
                                                          : double(knobs.run_chunk_bytes);
  const double share = link * std::min(1.0, knobs.channels / saturating) / knobs.channels;
  const double fill =
      truth.slow * k.fill_share * stages * std::min(unit, double(knobs.run_chunk_bytes)) / share;
  // Compute overlapping the collective's data movement runs on the SMs its channels leave (that it
  // overlaps the bandwidth part, not the latency part, is an assumption).
  const double sms = double(gpu_sm_count(t.arch));
  const double compute = f.knobs.compute_overlap * volume * knobs.channels / (sms - knobs.channels);
  return lat + bandwidth_term + fill + compute;
}

double knob_time_us(const FabricPreset& f, const Deviations& d, const KnobDeviations& k, const Context& ctx,
                    const Arm& arm) {
  const int slot = arm.slot();
  if (!is_nccl_slot(slot)) return std::numeric_limits<double>::quiet_NaN();
  const double truth = true_time_us(f, d, ctx, slot);
  if (!std::isfinite(truth)) return truth;
  const model::Topology t = topology_for(f, ctx.nodes, ctx.gpus_per_node);
  const EffectiveKnobs knobs = effective_knobs(t, ctx, arm);
  const EffectiveKnobs nccl = effective_knobs(t, ctx, Arm::of_slot(slot));
  if (knobs == nccl) return truth;
  const TruthParts parts = truth_parts(f, d, ctx, slot);
  // The ratio first: arms the model prices alike then keep the truth to the bit.
  const double ratio =
      knob_model_us(f, k, parts, ctx, slot, knobs, nccl) / knob_model_us(f, k, parts, ctx, slot, nccl, nccl);
  return truth * ratio;
}

KnobSimulator::KnobSimulator(FabricPreset preset, uint64_t seed)
    : preset_(std::move(preset)),
      seed_(seed),
      dev_(draw_deviations(preset_, seed)),
      knob_dev_(draw_knob_deviations(preset_, seed)) {}

double KnobSimulator::mean_us(const Context& ctx, const Arm& arm) const {
  return knob_time_us(preset_, dev_, knob_dev_, ctx, arm);
}

double KnobSimulator::sample_us(const Context& ctx, const Arm& arm, int r, double mean_us) const {
  return sample_arm_time_us(preset_, seed_, ctx, arm, r, mean_us);
}

}  // namespace ncclbot::sim
