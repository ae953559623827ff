// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/data_parallel.hpp"

#include <algorithm>
#include <numeric>

#include "models/transformer/pass_costs.hpp"
#include "models/transformer/static_memory.hpp"

namespace ppsim {
namespace {

// The stages of `device`, in stage order (Megatron's model chunks of that pipeline rank).
std::vector<int> stages_of(const TransformerCostModel& model, int device) {
  std::vector<int> stages;
  for (std::size_t s = 0; s < model.stage_device().size(); ++s) {
    if (model.stage_device()[s] == device) stages.push_back(static_cast<int>(s));
  }
  return stages;
}

double stage_parameters(const TransformerCostModel& model, int stage) {
  const TransformerSetup& setup = model.setup();
  return stage_parameter_count(setup.arch, model.stages()[static_cast<std::size_t>(stage)].contents,
                               setup.layout.tensor_parallel, model.stages().size() == 1,
                               expert_model_shards(setup.layout));
}

// The share of a stage's parameters that are routed experts' (reduced over their own group).
double stage_expert_share(const TransformerCostModel& model, int stage) {
  if (!has_experts(model.setup().arch)) return 0;  // dense: no layer count per bucket
  const double all = stage_parameters(model, stage);
  if (!(all > 0)) return 0;
  const TransformerSetup& setup = model.setup();
  return stage_expert_parameter_count(setup.arch, model.stages()[static_cast<std::size_t>(stage)].contents,
                                      expert_model_shards(setup.layout)) /
         all;
}

// Megatron buckets only the first pipeline rank's first model chunk (DistributedDataParallel.__init__:
// `disable_bucketing or pp_rank > 0` sets bucket_size to None; training.py passes disable_bucketing
// for model chunks after the first), and nothing at all without overlap_grad_reduce.
std::vector<double> buckets_of(const TransformerCostModel& model, int stage) {
  const TrainingLayout& layout = model.setup().layout;
  const double parameters = stage_parameters(model, stage);
  if (stage != 0 || !layout.overlap_grad_reduce) return {parameters};
  const double bucket = layout.bucket_parameters > 0 ? static_cast<double>(layout.bucket_parameters)
                                                     : default_bucket_parameters(layout.gradient_ranks());
  return bucket_split(parameters, bucket);
}

}  // namespace

int data_parallel_ranks_per_node(const TransformerSetup& setup) {
  // t ranks apart, so a node of n GPUs holds n / t of the group's d x c ranks (at least one).
  const int per_node = setup.hardware.devices_per_node / std::max(1, setup.layout.tensor_parallel);
  return std::clamp(per_node, 1, std::max(1, setup.layout.gradient_ranks()));
}

bool data_parallel_crosses_nodes(const TransformerSetup& setup) {
  // Data-parallel ranks of one pipeline device are t ranks apart (Megatron's order: tp, cp, dp, pp,
  // the gradients reducing over cp and dp together), so the ring stays inside a node when t * c * d
  // GPUs fit in one.
  return std::int64_t{setup.layout.tensor_parallel} * setup.layout.gradient_ranks() > setup.hardware.devices_per_node;
}

bool gradients_compressed(const TrainingLayout& layout) {
  return layout.grad_compression == "fp8" || layout.grad_compression == "1bit";
}

namespace {

// The group a gradient reduces over: the d data-parallel ranks, or for routed experts' gradients the
// expert data-parallel group of t d / (e etp) ranks, e etp apart (parallel_state.py orders expert
// ranks etp, ep, dp), which leaves the node when the whole t * d span does.
struct ReduceGroup {
  int ranks = 1;
  bool inter_node = false;
  int per_node = 1;
};

ReduceGroup dense_group(const TransformerSetup& setup) {
  return {setup.layout.gradient_ranks(), data_parallel_crosses_nodes(setup), data_parallel_ranks_per_node(setup)};
}

ReduceGroup expert_group(const TransformerSetup& setup) {
  const int ranks = expert_data_parallel(setup.layout);
  const int stride = expert_model_shards(setup.layout);
  return {ranks, data_parallel_crosses_nodes(setup) && ranks > 1,
          std::clamp(setup.hardware.devices_per_node / stride, 1, ranks)};
}

double reduce_over(const TransformerSetup& setup, double parameters, const ReduceGroup& group) {
  // The gradient buffer's dtype (gradient_bytes: fp32 by default with bf16, Megatron's
  // accumulate_allreduce_grads_in_fp32), reduce-scattered with the distributed optimizer,
  // all-reduced (two ring phases) without; compressed, what --grad-compression puts on the wire.
  const TrainingLayout& layout = setup.layout;
  const double buffer = gradient_bytes(layout);
  const double wire = layout.grad_compression == "fp8" ? 1 : layout.grad_compression == "1bit" ? 1.0 / 8 : buffer;
  const Collective op = layout.distributed_optimizer ? Collective::kReduceScatter : Collective::kAllReduce;
  double seconds = collective_time(setup.hardware, op, wire * parameters, group.ranks, group.inter_node, group.per_node);
  if (layout.grad_compression == "fp8") {
    seconds += setup.hardware.memory_time((3 * buffer + 2) * parameters);
  } else if (layout.grad_compression == "1bit") {
    const double d = group.ranks;
    const double compress = 3 * kOneBitErrorBytes + 1.0 / 8;
    seconds += setup.hardware.memory_time(compress * parameters) +
               setup.hardware.memory_time((compress + d / 8) * parameters / d);
  }
  return seconds;
}

double gather_over(const TransformerSetup& setup, double parameters, double fp8_share, const ReduceGroup& group) {
  // The distributed optimizer's all-gather of the updated parameters, one ring phase: bf16, and FP8
  // for FP8 parameters (Megatron's --fp8-param-gather: "perform the param all-gather in fp8").
  if (!(parameters > 0) || group.ranks <= 1) return 0;
  const double bytes = parameters * (kParameterBytes * (1 - fp8_share) + kFp8ParameterBytes * fp8_share);
  return collective_time(setup.hardware, Collective::kAllGather, bytes, group.ranks, group.inter_node, group.per_node);
}

}  // namespace

// The expert gradients reduce as their own collective over their group: Megatron keeps them in their
// own buffers (DistributedDataParallel's expert_parallel_buffers), reduced over the expert
// data-parallel group; a bucket holds its stage's share of them.
double gradient_reduce_time(const TransformerSetup& setup, double parameters, double expert_share) {
  const ReduceGroup experts = expert_group(setup);
  return reduce_over(setup, parameters * (1 - expert_share), dense_group(setup)) +
         (expert_share > 0 && experts.ranks > 1 ? reduce_over(setup, parameters * expert_share, experts) : 0);
}

double parameter_gather_time(const TransformerSetup& setup, double parameters, double fp8_share, double expert_share) {
  return gather_over(setup, parameters * (1 - expert_share), fp8_share, dense_group(setup)) +
         (expert_share > 0 ? gather_over(setup, parameters * expert_share, fp8_share, expert_group(setup)) : 0);
}

double collective_contention(const HardwareProfile& profile, double overlapped_seconds) {
  if (profile.gemm_model.empty() || !(overlapped_seconds > 0)) return 0;
  // At most half the SMs, as in GemmModel::compute_time.
  const int sms = profile.gemm_model.sm_count;
  return overlapped_seconds * std::min(kDataParallelCollectiveSms, sms / 2) / sms;
}

double default_bucket_parameters(int data_parallel) {
  return std::max(40'000'000.0, 1'000'000.0 * data_parallel);
}

std::vector<double> bucket_split(double parameters, double bucket) {
  std::vector<double> sizes;
  if (parameters <= 0) return sizes;
  double left = parameters;
  while (left > bucket) {
    sizes.push_back(bucket);
    left -= bucket;
  }
  sizes.push_back(left);
  return sizes;
}

DeviceCollectives device_collectives(const TransformerCostModel& model, int device, double device_end,
                                     const std::vector<StageTimes>& stages) {
  const TransformerSetup& setup = model.setup();
  const TrainingLayout& layout = setup.layout;
  DeviceCollectives out;
  out.reduce_end = device_end;
  if (layout.gradient_ranks() <= 1) return out;
  const std::vector<int> chunks = stages_of(model, device);

  // Gradient buckets, each ready when the chunk's last gradient op has produced it: the op runs
  // through the parameters in reverse, so a bucket is ready at the share of the op its gradients
  // and those before them take. Without overlap every chunk waits for the device's last op.
  for (const int stage : chunks) {
    const StageTimes& times = stages[static_cast<std::size_t>(stage)];
    const std::vector<double> buckets = buckets_of(model, stage);
    const double total = std::accumulate(buckets.begin(), buckets.end(), 0.0);
    double produced = 0;
    for (const double parameters : buckets) {
      produced += parameters;
      const double span = times.gradient_end - times.gradient_start;
      const double ready = layout.overlap_grad_reduce ? times.gradient_start + span * (produced / total) : device_end;
      out.reduce.push_back(BucketCollective{stage, parameters, ready, 0, 0});
    }
  }
  // One communication stream: collectives run one at a time, in the order their gradients are ready.
  // Each chunk's share of routed experts, once, not once per bucket.
  std::vector<double> expert_share(model.stages().size(), 0.0);
  for (const int stage : chunks) expert_share[static_cast<std::size_t>(stage)] = stage_expert_share(model, stage);
  std::stable_sort(out.reduce.begin(), out.reduce.end(),
                   [](const BucketCollective& a, const BucketCollective& b) { return a.ready < b.ready; });
  double stream_free = 0;
  for (BucketCollective& bucket : out.reduce) {
    bucket.start = std::max(bucket.ready, stream_free);
    bucket.end = bucket.start + gradient_reduce_time(setup, bucket.parameters,
                                                     expert_share[static_cast<std::size_t>(bucket.stage)]);
    stream_free = bucket.end;
  }
  // Buckets reduced while the device still computes slow that compute down; the loss delays the
  // device's last op and everything queued after it.
  double beside_compute = 0;
  for (const BucketCollective& bucket : out.reduce) {
    beside_compute += std::max(0.0, std::min(bucket.end, device_end) - bucket.start);
  }
  const double reduce_contention = collective_contention(setup.hardware, beside_compute);
  out.contention = reduce_contention;
  if (!out.reduce.empty()) out.reduce_end = std::max(device_end, out.reduce.back().end) + reduce_contention;
  out.reduce_exposed = out.reduce_end - device_end;

  // The next step's parameter all-gather, overlapped with its first forwards: each chunk's first
  // bucket is dispatched when its first forward needs it and waited for; waiting for bucket k
  // dispatches bucket k + 1 (_ParamAndGradBucketGroup.finish_param_sync), which the forward reaches
  // after bucket k's share of its time. Forward order is the reverse of the gradient buckets'.
  if (layout.distributed_optimizer && layout.overlap_param_gather) {
    const double fp8_share = fp8_parameter_share(setup.layout, model.static_memory()[static_cast<std::size_t>(device)]);
    std::vector<int> forward_order = chunks;
    std::stable_sort(forward_order.begin(), forward_order.end(), [&](int a, int b) {
      return stages[static_cast<std::size_t>(a)].first_forward < stages[static_cast<std::size_t>(b)].first_forward;
    });
    double shift = 0;  // how much this device's forwards have waited so far
    double stream = 0;
    for (const int stage : forward_order) {
      std::vector<double> buckets = buckets_of(model, stage);
      std::reverse(buckets.begin(), buckets.end());
      const double total = std::accumulate(buckets.begin(), buckets.end(), 0.0);
      const double forward = model.stages()[static_cast<std::size_t>(stage)].times.forward.total();
      const double first = stages[static_cast<std::size_t>(stage)].first_forward;
      double before = 0;       // parameters of the buckets the forward has passed
      double dispatch = 0;     // when this bucket's all-gather is issued
      for (std::size_t k = 0; k < buckets.size(); ++k) {
        const double need = first + shift + forward * (before / total);
        if (k == 0) dispatch = need;
        BucketCollective gather{stage, buckets[k], dispatch, std::max(dispatch, stream), 0};
        gather.end = gather.start + parameter_gather_time(setup, buckets[k], fp8_share,
                                                           expert_share[static_cast<std::size_t>(stage)]);
        stream = gather.end;
        const double wait = std::max(0.0, gather.end - need);
        shift += wait;
        dispatch = need + wait;  // the wait for bucket k issues bucket k + 1
        before += buckets[k];
        out.gather.push_back(gather);
      }
    }
    // The all-gathers run beside the next step's forwards, which they slow, except while a forward
    // waits for one (`shift`), when no compute runs to slow.
    double gathering = 0;
    for (const BucketCollective& gather : out.gather) gathering += gather.end - gather.start;
    const double gather_contention = collective_contention(setup.hardware, std::max(0.0, gathering - shift));
    out.contention += gather_contention;
    out.gather_exposed = shift + gather_contention;
  }
  return out;
}

}  // namespace ppsim
