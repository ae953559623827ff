// SPDX-License-Identifier: Apache-2.0
// Where an op's expert all-to-alls fall inside it, for the timelines' all-to-all lanes. Nothing here
// changes a time: the places follow the same terms as compute_time and overlap_time, laid end to end.

#include <cstddef>
#include <vector>

#include "models/transformer/transformer_cost_model.hpp"

namespace ppsim {
namespace {

// Lays passes end to end from `clock`, noting each all-to-all's interval (in seconds; the caller
// turns them into fractions of the op once the whole op is laid out).
class Layout {
 public:
  explicit Layout(std::vector<Exchange>& out) : out_(out), first_(out.size()) {}

  void run(double seconds) {
    if (seconds > 0) clock_ += seconds;  // a remainder that rounding left a hair below zero runs as none
  }
  void exchange(double seconds, ExchangeKind kind, bool of_partner, bool recomputed) {
    if (seconds > 0) out_.push_back({clock_, clock_ + seconds, kind, of_partner, recomputed});
  }
  // An exchange on the communication stream from the current time, while the compute stream runs
  // `phase` (the longer of the two, overlap_time's phase).
  void beside(double phase, double seconds, ExchangeKind kind, bool of_partner) {
    exchange(seconds, kind, of_partner, false);
    clock_ += phase;
  }
  void exchange_then_run(double seconds, ExchangeKind kind, bool of_partner, bool recomputed) {
    exchange(seconds, kind, of_partner, recomputed);
    clock_ += seconds;
  }

  // An MoE layer's forward: attention (with its router and permute), dispatch, experts, combine
  // (megatron/core/transformer/moe/moe_layer.py, MoELayer.forward).
  void moe_forward(const PassTime& pass, bool of_partner, bool recomputed) {
    run(pass.total() - pass.dispatch - pass.experts);
    exchange_then_run(pass.dispatch / 2, ExchangeKind::kDispatch, of_partner, recomputed);
    run(pass.experts);
    exchange_then_run(pass.dispatch / 2, ExchangeKind::kCombine, of_partner, recomputed);
  }
  // Its input gradient, in reverse: the combine's gradient, the experts', the dispatch's, then the
  // attention's. When the recomputation re-runs the layer's all-to-alls (full, or the moe module),
  // the whole recomputation comes first, laid out as a forward with those all-to-alls.
  void moe_input_grad(const PassTimes& layer, bool refreshes_exchanges, bool of_partner) {
    const PassTime& pass = layer.input_grad;
    double rest = pass.total() - pass.dispatch - pass.experts;
    if (refreshes_exchanges) {
      PassTime refresh;
      refresh.dispatch = layer.forward.dispatch;
      refresh.experts = layer.forward.experts;
      refresh.gemm = pass.recompute - refresh.dispatch;  // experts is a part of total(), not a further term
      moe_forward(refresh, of_partner, true);
      rest -= pass.recompute;
    }
    exchange_then_run(pass.dispatch / 2, ExchangeKind::kCombine, of_partner, false);
    run(pass.experts);
    exchange_then_run(pass.dispatch / 2, ExchangeKind::kDispatch, of_partner, false);
    run(rest);
  }

  // The exchanges noted since construction as fractions of the time laid out.
  void finish() {
    if (!(clock_ > 0)) {
      out_.resize(first_);
      return;
    }
    for (std::size_t i = first_; i < out_.size(); ++i) {
      out_[i].from /= clock_;
      out_[i].to /= clock_;
    }
  }

 private:
  std::vector<Exchange>& out_;
  std::size_t first_;
  double clock_ = 0;
};

}  // namespace

void TransformerCostModel::exchanges(const Action& action, const Action* partner, std::vector<Exchange>& out) const {
  if (pieces_.empty()) return;
  const ActivationLayout recompute = setup_.layout.activation_layout();
  const bool refreshes = recompute.recompute == Recompute::kFull || recompute.recomputes_moe();
  Layout layout(out);
  // One op alone: its stage's pieces in order, backward ones in reverse.
  auto lay_out_op = [&](const Action& op, bool of_partner) {
    const std::vector<Piece>& pieces = pieces_[static_cast<std::size_t>(op.stage)];
    if (op.op == Op::kForward) {
      for (const Piece& piece : pieces) {
        if (piece.moe) {
          layout.moe_forward(piece.times.forward, of_partner, false);
        } else {
          layout.run(piece.times.forward.total());
        }
      }
      return;
    }
    for (auto piece = pieces.rbegin(); piece != pieces.rend(); ++piece) {
      if (op.op != Op::kBackwardWeight) {
        if (piece->moe) {
          layout.moe_input_grad(piece->times, refreshes, of_partner);
        } else {
          layout.run(piece->times.input_grad.total());
        }
      }
      if (op.op != Op::kBackwardInput) layout.run(piece->times.weight_grad.total());
    }
  };
  if (!action.fused_with_next || partner == nullptr) {
    lay_out_op(action, false);
    layout.finish();
    return;
  }
  const PairPhases pair = pair_phases(action.stage, partner->op, partner->stage);
  if (pair.pairs == 0) {
    // Nothing overlaps: the two halves one after the other, as CostModel::overlap_time sums them.
    lay_out_op(action, false);
    lay_out_op(*partner, true);
    layout.finish();
    return;
  }
  // overlap_time's four phases per pair of layers, each all-to-all from its phase's start; the
  // recomputed forward of a fully recomputed backward is compute there, and so it is here.
  const double f_half = pair.layer_f.dispatch / 2;
  const double b_half = pair.layer_b.dispatch / 2;
  for (int k = 0; k < pair.pairs; ++k) {
    layout.beside(pair.phase[0], b_half, ExchangeKind::kCombine, true);
    layout.beside(pair.phase[1], f_half, ExchangeKind::kDispatch, false);
    layout.beside(pair.phase[2], b_half, ExchangeKind::kDispatch, true);
    layout.beside(pair.phase[3], f_half, ExchangeKind::kCombine, false);
  }
  // Then what runs alone: the MoE layers without a partner (the stage with more of them), and the
  // rest (dense layers, embedding, head).
  double rest = pair.alone;
  const int forward_only = moe_layers_[static_cast<std::size_t>(action.stage)] - pair.pairs;
  const int backward_only = moe_layers_[static_cast<std::size_t>(partner->stage)] - pair.pairs;
  for (int k = 0; k < forward_only; ++k) {
    layout.moe_forward(pair.layer_f, false, false);
    rest -= pair.layer_f.total();
  }
  for (int k = 0; k < backward_only; ++k) {
    layout.exchange_then_run(b_half, ExchangeKind::kCombine, true, false);
    layout.run(pair.layer_b.experts);
    layout.exchange_then_run(b_half, ExchangeKind::kDispatch, true, false);
    layout.run(pair.layer_b.total() - pair.layer_b.dispatch - pair.layer_b.experts);
    rest -= pair.layer_b.total();
  }
  layout.run(rest);
  layout.finish();
}

}  // namespace ppsim
