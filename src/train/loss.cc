#include "cadclip/train/loss.h"

#include <ATen/ATen.h>

#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/train/sampler.h"

namespace cadclip::train {

std::string_view loss_kind_name(LossKind kind) {
  return kind == LossKind::kSigLip ? "siglip" : "infonce";
}

LossKind parse_loss_kind(std::string_view name) {
  if (name == "infonce") return LossKind::kInfoNce;
  if (name == "siglip") return LossKind::kSigLip;
  throw Error(format("loss '{}' is not infonce or siglip", name));
}

void to_json(nlohmann::json& json, LossKind kind) { json = loss_kind_name(kind); }
void from_json(const nlohmann::json& json, LossKind& kind) {
  kind = parse_loss_kind(json.get<std::string>());
}
namespace {

// Pads `x` ([b, ...]) with zero rows to `rows`.
at::Tensor pad_rows(const at::Tensor& x, int64_t rows) {
  if (x.size(0) == rows) return x;
  std::vector<int64_t> shape = x.sizes().vec();
  shape[0] = rows - x.size(0);
  return at::cat({x, at::zeros(shape, x.options())}, 0);
}

// FNV-1a over the text with runs of whitespace read as one space and none at
// the ends: "a  plate" and "a plate" state the same.
uint64_t whitespace_insensitive_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  bool space = false;
  bool started = false;
  for (unsigned char c : text) {
    if (std::isspace(c)) {
      space = true;
      continue;
    }
    if (space && started) h = (h ^ ' ') * 1099511628211ull;
    space = false;
    started = true;
    h = (h ^ c) * 1099511628211ull;
  }
  return h;
}

}  // namespace

int64_t caption_key(const std::string& text, const std::string& facts) {
  if (!facts.empty() && facts != "{}")
    return static_cast<int64_t>(mix_hash(whitespace_insensitive_hash(facts), 0xfac75));
  return static_cast<int64_t>(mix_hash(whitespace_insensitive_hash(text)));
}

int64_t geometry_key(const std::string& hex, int64_t fallback) {
  if (hex.size() < 16) return fallback;
  try {
    return static_cast<int64_t>(std::stoull(hex.substr(0, 16), nullptr, 16));
  } catch (const std::exception&) {
    return fallback;  // not hex: no sameness can be read from it
  }
}

at::Tensor false_negative_mask(const at::Tensor& caption_key, const at::Tensor& geometry_key) {
  const int64_t n = caption_key.size(0);
  at::Tensor same = caption_key.unsqueeze(1).eq(caption_key.unsqueeze(0)) |
                    geometry_key.unsqueeze(1).eq(geometry_key.unsqueeze(0));
  return same & ~at::eye(n, same.options().dtype(at::kBool));
}

at::Tensor queue_false_negative_mask(const at::Tensor& caption_key, const at::Tensor& geometry_key,
                                     const at::Tensor& queue_caption_key,
                                     const at::Tensor& queue_geometry_key) {
  return caption_key.unsqueeze(1).eq(queue_caption_key.unsqueeze(0)) |
         geometry_key.unsqueeze(1).eq(queue_geometry_key.unsqueeze(0));
}

LossResult contrastive_loss(Communicator& communicator, const ContrastivePairs& local,
                            const at::Tensor& logit_scale, const at::Tensor& logit_bias,
                            const LossOptions& options, const QueueNegatives* queue) {
  const bool with_queue = queue != nullptr && queue->text.defined() && queue->text.size(0) > 0;
  if (with_queue) {
    CADCLIP_CHECK(communicator.world_size() == 1,
                  "the momentum queue is a single-process feature (world size {})",
                  communicator.world_size());
    CADCLIP_CHECK(queue->cad.size(0) == queue->text.size(0) &&
                      queue->caption_key.size(0) == queue->text.size(0) &&
                      queue->geometry_key.size(0) == queue->text.size(0),
                  "queue negatives disagree in their row counts");
  }
  const int64_t rows = local.text.size(0);
  CADCLIP_CHECK(local.cad.size(0) == rows && local.caption_key.size(0) == rows &&
                    local.geometry_key.size(0) == rows,
                "contrastive pairs disagree in their row counts");
  const auto long_options = local.caption_key.options().dtype(at::kLong);

  // Every rank's row count, so that uneven batches can be padded and masked.
  const at::Tensor counts =
      communicator.all_gather(at::full({1}, rows, long_options).to(local.text.device()));
  const int64_t widest = counts.max().item<int64_t>();
  const at::Tensor valid_local =
      pad_rows(at::ones({rows}, long_options.device(local.text.device())), widest);

  const at::Tensor text = all_gather_with_grad(communicator, pad_rows(local.text, widest));
  const at::Tensor cad = all_gather_with_grad(communicator, pad_rows(local.cad, widest));
  const at::Tensor keep = communicator.all_gather(valid_local).nonzero().squeeze(1);
  const at::Tensor caption_key =
      communicator.all_gather(pad_rows(local.caption_key, widest)).index_select(0, keep);
  const at::Tensor geometry_key =
      communicator.all_gather(pad_rows(local.geometry_key, widest)).index_select(0, keep);
  const at::Tensor t = text.index_select(0, keep);
  const at::Tensor c = cad.index_select(0, keep);
  const int64_t n = t.size(0);

  LossResult result;
  result.global_count = n;
  // Similarities in fp32 at least, even when a tower ran in reduced precision
  // (a logit scale of 100 in bf16 is off by ~0.25); fp64 stays fp64.
  const at::ScalarType compute = t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor logits = logit_scale.to(compute) * t.to(compute).matmul(c.to(compute).t());
  at::Tensor mask;
  if (options.mask_false_negatives) {
    mask = false_negative_mask(caption_key, geometry_key);
    result.masked_pairs = mask.sum().item<int64_t>();
  }

  // Queue logits: batch rows against the momentum embeddings of earlier batches.
  at::Tensor text_to_queue, cad_to_queue, queue_mask;  // [n, k]
  if (with_queue) {
    const at::Tensor scale = logit_scale.to(compute);
    text_to_queue = scale * t.to(compute).matmul(queue->cad.detach().to(compute).t());
    cad_to_queue = scale * c.to(compute).matmul(queue->text.detach().to(compute).t());
    if (options.mask_false_negatives) {
      queue_mask = queue_false_negative_mask(caption_key, geometry_key, queue->caption_key,
                                             queue->geometry_key);
      result.masked_queue = queue_mask.sum().item<int64_t>();
    }
  }

  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  if (options.kind == LossKind::kInfoNce) {
    if (mask.defined()) logits = logits.masked_fill(mask, kMinusInf);
    const at::Tensor target = at::arange(n, long_options.device(logits.device()));
    at::Tensor rows_text = logits;     // text i against CAD j (and the CAD queue)
    at::Tensor rows_cad = logits.t();  // CAD i against text j (and the text queue)
    if (with_queue) {
      if (queue_mask.defined()) {
        text_to_queue = text_to_queue.masked_fill(queue_mask, kMinusInf);
        cad_to_queue = cad_to_queue.masked_fill(queue_mask, kMinusInf);
      }
      rows_text = at::cat({rows_text, text_to_queue}, 1);
      rows_cad = at::cat({rows_cad, cad_to_queue}, 1);
    }
    const at::Tensor text_to_cad = at::cross_entropy_loss(rows_text, target);
    const at::Tensor cad_to_text = at::cross_entropy_loss(rows_cad, target);
    result.loss = (text_to_cad + cad_to_text) / 2;
  } else {
    CADCLIP_CHECK(logit_bias.defined(), "SigLIP needs a logit bias");
    const at::Tensor bias = logit_bias.to(compute);
    const at::Tensor z = 2 * at::eye(n, logits.options()) - 1;  // +1 diagonal, -1 elsewhere
    at::Tensor terms = at::log_sigmoid(z * (logits + bias));
    if (mask.defined()) terms = terms.masked_fill(mask, 0);
    at::Tensor total = terms.sum();
    if (with_queue) {
      at::Tensor queue_terms =
          at::log_sigmoid(-(text_to_queue + bias)) + at::log_sigmoid(-(cad_to_queue + bias));
      if (queue_mask.defined()) queue_terms = queue_terms.masked_fill(queue_mask, 0);
      total = total + queue_terms.sum();
    }
    result.loss = -total / static_cast<double>(n);
  }
  return result;
}

}  // namespace cadclip::train
