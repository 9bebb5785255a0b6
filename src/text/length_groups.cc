#include "cadclip/text/length_groups.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/size_groups.h"

namespace cadclip::text {
namespace {

// Positions of `rows`, shortest first (stable), in passes of at most max_rows.
// Fixed passes order by full length where the rows carry it, so that texts
// the limit cut (all of the same length) keep the order of their full
// lengths; group_by_size groups by the lengths that are padded.
std::vector<std::vector<int64_t>> passes(const TokenRows& rows, const LengthGrouping& grouping) {
  std::vector<int64_t> lengths(rows.ids.size());
  for (size_t i = 0; i < rows.ids.size(); ++i)
    lengths[i] = static_cast<int64_t>(rows.ids[i].size());
  std::vector<std::vector<int64_t>> groups;
  if (grouping.group_overhead > 0) {
    groups = group_by_size(lengths, grouping.group_overhead);
  } else {
    std::vector<int64_t> order(rows.ids.size());
    std::iota(order.begin(), order.end(), 0);
    const std::vector<int64_t>& key =
        rows.full_lengths.size() == rows.ids.size() ? rows.full_lengths : lengths;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return key[a] < key[b]; });
    groups.push_back(std::move(order));
  }
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<int64_t>& group : groups) {
    for (size_t begin = 0; begin < group.size(); begin += static_cast<size_t>(grouping.max_rows)) {
      const size_t end = std::min(group.size(), begin + static_cast<size_t>(grouping.max_rows));
      out.emplace_back(group.begin() + static_cast<ptrdiff_t>(begin),
                       group.begin() + static_cast<ptrdiff_t>(end));
    }
  }
  return out;
}

}  // namespace

PaddedRows pad_rows(std::span<const std::vector<int64_t>> rows, int64_t pad_id) {
  int64_t longest = 0;
  for (const std::vector<int64_t>& row : rows)
    longest = std::max<int64_t>(longest, static_cast<int64_t>(row.size()));
  const auto b = static_cast<int64_t>(rows.size());
  PaddedRows out{at::full({b, longest}, pad_id, at::kLong), at::zeros({b, longest}, at::kLong)};
  auto ids = out.ids.accessor<int64_t, 2>();
  auto mask = out.mask.accessor<int64_t, 2>();
  for (int64_t r = 0; r < b; ++r) {
    const std::vector<int64_t>& row = rows[static_cast<size_t>(r)];
    for (size_t j = 0; j < row.size(); ++j) {
      ids[r][static_cast<int64_t>(j)] = row[j];
      mask[r][static_cast<int64_t>(j)] = 1;
    }
  }
  return out;
}

std::vector<int64_t> encode_cut(const Tokenizer& tokenizer, std::string_view text,
                                int64_t max_length, int64_t* full_length) {
  std::vector<int64_t> ids = tokenizer.encode(text);
  if (full_length != nullptr) *full_length = static_cast<int64_t>(ids.size());
  if (max_length > 0 && static_cast<int64_t>(ids.size()) > max_length) {
    ids.resize(static_cast<size_t>(max_length - 1));
    ids.push_back(tokenizer.sep_id());
  }
  return ids;
}

TokenRows tokenize_rows(const Tokenizer& tokenizer, std::span<const std::string> texts,
                        int64_t max_length) {
  if (max_length == 1 || max_length < 0)
    throw Error(
        format("a length limit of {} tokens leaves no room for [CLS] and [SEP]; use 0 "
               "(none) or at least 2",
               max_length));
  TokenRows rows;
  rows.ids.reserve(texts.size());
  rows.full_lengths.reserve(texts.size());
  for (const std::string& text : texts) {
    int64_t full = 0;
    rows.ids.push_back(encode_cut(tokenizer, text, max_length, &full));
    rows.full_lengths.push_back(full);
    rows.truncated += static_cast<int64_t>(rows.ids.back().size()) < full;
  }
  return rows;
}

at::Tensor forward_in_length_groups(const TokenRows& rows, int64_t pad_id,
                                    const LengthGrouping& grouping, c10::Device device,
                                    const GroupForward& forward) {
  if (grouping.max_rows < 1)
    throw Error(format("a text batch of {} rows is too small: use at least 1", grouping.max_rows));
  if (grouping.group_overhead < 0)
    throw Error(format("group_overhead {} must be 0 or positive", grouping.group_overhead));
  const auto n = static_cast<int64_t>(rows.ids.size());
  if (n == 0) return at::empty({0, 0}, at::kFloat);
  at::Tensor out;
  for (const std::vector<int64_t>& pass : passes(rows, grouping)) {
    std::vector<std::vector<int64_t>> batch;
    batch.reserve(pass.size());
    for (const int64_t i : pass) batch.push_back(rows.ids[static_cast<size_t>(i)]);
    const auto [ids, mask] = pad_rows(batch, pad_id);
    const at::Tensor result =
        forward(ids.to(device), mask.to(device), pass).to(at::kCPU, at::kFloat);
    if (!out.defined()) out = at::empty({n, result.size(1)}, at::kFloat);
    out.index_copy_(0, at::tensor(pass, at::kLong), result);
  }
  return out;
}

}  // namespace cadclip::text
