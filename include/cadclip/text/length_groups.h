// Many texts through a text encoder with little padding: the one way texts
// are embedded in bulk (TextModel::embed, and model::TextEmbedder for the
// trainer's feature cache, evaluate and the searcher). Each text is tokenized
// once; the rows run shortest first in groups padded only to their own longest.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "cadclip/text/tokenizer.h"

namespace cadclip::text {

// Texts as token rows, each cut to the length limit.
struct TokenRows {
  std::vector<std::vector<int64_t>> ids;  // per text: [CLS] pieces [SEP], at most the limit
  std::vector<int64_t> full_lengths;      // per text: its ids without the limit (may be empty)
  int64_t truncated = 0;                  // texts the limit cut
};

// One text: a text longer than max_length (>= 2; 0 = no limit) keeps its
// first pieces and [SEP], as transformers' truncation=True does.
// `full_length`, when given, receives the length before the cut.
std::vector<int64_t> encode_cut(const Tokenizer& tokenizer, std::string_view text,
                                int64_t max_length, int64_t* full_length = nullptr);
TokenRows tokenize_rows(const Tokenizer& tokenizer, std::span<const std::string> texts,
                        int64_t max_length);

// Token rows as ids and attention mask [b, T] int64 on the CPU, T the
// longest row: each row padded with the pad id (mask 0) after its end. The
// one padding of token rows: the passes below and a training step's batch.
struct PaddedRows {
  at::Tensor ids;
  at::Tensor mask;
};
PaddedRows pad_rows(std::span<const std::vector<int64_t>> rows, int64_t pad_id);

// How rows are cut into forward passes.
struct LengthGrouping {
  int64_t max_rows = 128;  // rows per pass at most (memory)
  // 0: in length order, passes of max_rows: for bulk runs (training,
  // evaluation), where sorted passes pad to within a few tokens of their own
  // longest anyway. > 0: group_by_size (core/size_groups.h) chooses the cuts,
  // weighing padding against this many attention slots of one more pass: for
  // a few texts of widely varied length (search queries).
  int64_t group_overhead = 0;
};

// forward(ids, mask, rows): ids and mask [b, T] int64 on the device (pad id /
// 0 after each row's end, T the group's longest row) for the texts at
// positions `rows` -> [b, d].
using GroupForward = std::function<at::Tensor(const at::Tensor& ids, const at::Tensor& mask,
                                              std::span<const int64_t> rows)>;

// Runs `forward` over every row in groups of similar length, shortest first
// (by full length where `rows` has them, so that cut rows keep the order of
// their full lengths; ties in input order), and returns [n, d] float32 on the
// CPU in input order ([0, 0] for no rows).
at::Tensor forward_in_length_groups(const TokenRows& rows, int64_t pad_id,
                                    const LengthGrouping& grouping, c10::Device device,
                                    const GroupForward& forward);

}  // namespace cadclip::text
