// search_bench grow  --from INDEX[,INDEX...] --out BIG --count N [--noise S] [--factory F]
//                    [--search-params P] [--seed K]
//   A library of N parts from real indexes of n < N parts in all: the n real
//   embeddings, then N - n perturbed copies (real row + S * gaussian noise per
//   dimension, renormalised; ids "<id>~<j>", the same thumbnail, each extent
//   scaled by a factor in [0.95, 1.05], a geometry hash of its own). Every
//   part gets a catalog field "bucket", a whole number drawn uniformly from
//   0 to 999, so that `bucket<500`, `<50` and `<5` keep 50%, 5% and 0.5%.
//   Prints how far apart real parts are (median cosine to the nearest other
//   real part) and how far a copy is from its source, so that S can be chosen
//   to make copies as distinct as real neighbours are.
// search_bench filtered --index INDEX --queries FILE [--threads T] [--count Q]
//                       [--search-params P]
//   Text queries under filters of about 50%, 5% and 0.5% of the library (the
//   "bucket" field, which is independent of the embeddings, and the largest
//   extent, which is not) next to none: the filter's pass over the catalog
//   (what the first query under a filter pays; later ones find its rows
//   kept), end-to-end p50/p99 and queries per second (tokenize + encode +
//   filtered search, one query at a time), search alone, and recall@10
//   against the exact filtered search (every passing part scored).
// search_bench facts --index INDEX --queries FILE [--threads T] [--count Q]
//                     [--search-params P]
//   The cost of ranking by the facts a text states: each query end to end
//   with the facts (the default) and with the embedding alone, alternating
//   query by query; p50/p99 of each, and of the queries that state a fact.
// search_bench duplicates --index INDEX [--kinds exact,mirrored,near] [--threads T]
//   The cost of `cadclip duplicates` on the index, and what it found.
// search_bench query --index EXACT [--approx APPROX] --queries FILE [--threads T]
//                    [--sweep "P1;P2;..."] [--latency no]
//   Text queries (one per line) end to end: tokenize + encode + search, p50 and
//   p99 over all queries after a warm-up; search alone; recall@10 of APPROX's
//   top 10 against EXACT's on the same queries, and for each FAISS parameter
//   setting of --sweep (e.g. "nprobe=8;nprobe=16") recall@10 and search time.
//   `--latency no` skips the end-to-end timing (recall only).
// search_bench encode --index INDEX --queries FILE --batches 1,2,4,8,16 [--threads T]
//                     [--rounds R]
//   The text encoder alone at several batch sizes, rounds alternating between
//   the sizes: median ms per batch and per text.
// search_bench precision --index INDEX --queries FILE [--threads T] [--count Q]
//   Query encoding in fp32 and in bf16 matmuls side by side, query by query
//   alternating: encode and end-to-end p50/p99 of each, the cosine between
//   the two embeddings of a query (min, p1, median), and how many of the
//   bf16 top 10 are in the fp32 top 10.
// query, filtered, facts and encode take --text-matmul fp32|bf16|auto (the
// searcher's default: auto).
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/index/duplicates.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/searcher.h"
#include "cadclip/index/stored_index.h"
#include "common/bench_util.h"

namespace {

namespace fs = std::filesystem;
using namespace cadclip;

std::map<std::string, std::string> parse(int argc, char** argv, int from) {
  std::map<std::string, std::string> args;
  for (int i = from; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  return args;
}

std::string need(const std::map<std::string, std::string>& a, const std::string& key) {
  const auto it = a.find(key);
  if (it == a.end()) throw Error("search_bench: missing " + key);
  return it->second;
}

// The searcher options every mode reads: --search-params and --text-matmul.
index::SearcherOptions searcher_options(const std::map<std::string, std::string>& a) {
  index::SearcherOptions options;
  if (a.count("--search-params")) options.search_params = a.at("--search-params");
  if (a.count("--text-matmul")) options.text_matmul = a.at("--text-matmul");
  return options;
}

int grow(const std::map<std::string, std::string>& a) {
  const fs::path from = need(a, "--from"), out = need(a, "--out");
  const int64_t count = std::stoll(need(a, "--count"));
  const double noise = a.count("--noise") ? std::stod(a.at("--noise")) : 0.02;
  const std::string factory = a.count("--factory") ? a.at("--factory") : "Flat";
  const std::string params = a.count("--search-params") ? a.at("--search-params") : "";
  torch::manual_seed(a.count("--seed") ? std::stoll(a.at("--seed")) : 0);
  std::vector<fs::path> froms;
  for (size_t at = 0; at <= from.string().size();) {
    const size_t comma = std::min(from.string().find(',', at), from.string().size());
    froms.emplace_back(from.string().substr(at, comma - at));
    at = comma + 1;
  }
  index::StoredIndex grown;  // the first source's provenance, every source's parts
  std::vector<index::StoredPart> real;
  std::set<std::string> ids;
  for (size_t j = 0; j < froms.size(); ++j) {
    index::StoredIndex source = index::read_stored_index(froms[j]);
    if (j == 0) {
      grown = source;
      grown.parts.clear();
    } else if (source.checkpoint_identity != grown.checkpoint_identity) {
      throw Error("search_bench grow: " + froms[j].string() + " was made with another checkpoint");
    }
    for (index::StoredPart& s : source.parts) {
      // Sources may reuse ids (two synth runs both start at synth_00000000).
      if (!ids.insert(s.item.id).second) {
        s.item.id += "@" + std::to_string(j);
        s.item.name = s.item.id;
        ids.insert(s.item.id);
      }
      real.push_back(std::move(s));
    }
  }
  if (real.empty()) throw Error("search_bench grow: the source indexes are empty");
  const int64_t d = static_cast<int64_t>(real.front().embedding.size());
  {
    // How far apart real parts are, and how far a copy lands from its source.
    const int64_t n = static_cast<int64_t>(real.size());
    at::Tensor all = at::empty({n, d});
    for (int64_t i = 0; i < n; ++i)
      all[i].copy_(at::from_blob(const_cast<float*>(real[i].embedding.data()), {d}));
    const int64_t sample = std::min<int64_t>(n, 1000);
    at::Tensor sims = at::mm(all.slice(0, 0, sample), all.t());
    sims.slice(1, 0, sample).fill_diagonal_(-2.0);
    at::Tensor copies = all.slice(0, 0, sample) + noise * at::randn({sample, d});
    copies = copies / copies.norm(2, 1, true);
    std::printf(
        "%lld real parts; cosine to the nearest other real part: median %.4f; a copy "
        "with noise %.3f to its source: median %.4f\n",
        static_cast<long long>(n), std::get<0>(sims.max(1)).median().item<double>(), noise,
        (copies * all.slice(0, 0, sample)).sum(1).median().item<double>());
  }
  const int64_t n = static_cast<int64_t>(real.size());
  const int64_t chunk = 4096;
  std::mt19937_64 rng(a.count("--seed") ? std::stoull(a.at("--seed")) : 0);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::uniform_int_distribution<int> bucket(0, 999);
  for (int64_t start = 0; start < count; start += chunk) {
    const int64_t end = std::min(count, start + chunk);
    at::Tensor rows = at::empty({end - start, d});
    for (int64_t i = start; i < end; ++i)
      rows[i - start].copy_(at::from_blob(const_cast<float*>(real[i % n].embedding.data()), {d}));
    // Rows past the real ones are perturbed copies.
    at::Tensor mask = (at::arange(start, end) >= n).to(at::kFloat).unsqueeze(1);
    rows = rows + noise * mask * at::randn({end - start, d});
    rows = rows / rows.norm(2, 1, true);
    for (int64_t i = start; i < end; ++i) {
      index::StoredPart part = real[i % n];
      if (i >= n) {
        part.item.id += "~" + std::to_string(i);
        part.item.name = part.item.id;
        part.item.caption.clear();
        part.item.geometry_hash += "~" + std::to_string(i);
        for (double& extent : part.item.size_mm) extent *= 0.95 + 0.1 * uniform(rng);
        part.thumbnail_file.clear();  // the copies share the source's file, copied once
      }
      part.item.metadata.emplace_back("bucket", std::to_string(bucket(rng)));
      const at::Tensor r = rows[i - start].contiguous();
      part.embedding.assign(r.data_ptr<float>(), r.data_ptr<float>() + d);
      grown.parts.push_back(std::move(part));
    }
  }
  fs::remove_all(out);
  const double seconds = bench::seconds_of([&] {
    index::write_stored_index(out, grown, {.factory = factory, .search_params = params});
  });
  std::printf(
      "grew %s: %zu parts (%lld real, the rest perturbed with noise %.3f per dim), "
      "FAISS %s (search parameters '%s') written in %.1f s\n",
      out.c_str(), grown.parts.size(), static_cast<long long>(n), noise, factory.c_str(),
      params.c_str(), seconds);
  return 0;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

std::vector<std::string> read_queries(const std::string& path) {
  std::vector<std::string> queries;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line))
    if (!line.empty()) queries.push_back(line);
  if (queries.empty()) throw Error("search_bench: no queries in " + path);
  return queries;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find(sep, at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

int query(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  const std::vector<std::string> queries = read_queries(need(a, "--queries"));
  const index::Searcher exact = index::Searcher::open(need(a, "--index"), searcher_options(a));
  std::printf(
      "index %s: %lld parts, %s; %zu queries; %d intra-op thread(s); text matmuls %s; matmul "
      "%.1f GFLOP/s\n",
      need(a, "--index").c_str(), static_cast<long long>(exact.size()), exact.factory().c_str(),
      queries.size(), threads, std::string(exact.text_matmul()).c_str(), bench::matmul_gflops());
  auto measure = [&](const index::Searcher& s, const std::string& label) {
    for (int i = 0; i < 5; ++i) (void)s.search_text(queries[i % queries.size()], 10);
    std::vector<double> total, encode, search;
    for (const std::string& q : queries) {
      const auto t0 = std::chrono::steady_clock::now();
      const at::Tensor e = s.embed_text(q);
      const auto t1 = std::chrono::steady_clock::now();
      (void)s.search(e, 10);
      const auto t2 = std::chrono::steady_clock::now();
      encode.push_back(std::chrono::duration<double>(t1 - t0).count());
      search.push_back(std::chrono::duration<double>(t2 - t1).count());
      total.push_back(std::chrono::duration<double>(t2 - t0).count());
    }
    std::printf(
        "%-24s end to end p50 %.2f ms, p99 %.2f ms | encode p50 %.2f ms, p99 %.2f ms | "
        "search p50 %.2f ms, p99 %.2f ms\n",
        label.c_str(), 1e3 * percentile(total, 0.5), 1e3 * percentile(total, 0.99),
        1e3 * percentile(encode, 0.5), 1e3 * percentile(encode, 0.99),
        1e3 * percentile(search, 0.5), 1e3 * percentile(search, 0.99));
  };
  const bool latency = !a.count("--latency") || a.at("--latency") != "no";
  if (latency) measure(exact, exact.factory());
  if (!a.count("--approx")) return 0;
  const index::Searcher approx = index::Searcher::open(a.at("--approx"), searcher_options(a));
  if (latency) measure(approx, approx.factory());

  // Recall: the exact top 10 of every query (ids), then the approximate
  // index's top 10 under its own parameters and each --sweep setting.
  std::vector<at::Tensor> chunks;
  for (size_t i = 0; i < queries.size(); i += 64)
    chunks.push_back(exact.embed_texts(std::vector<std::string>(
        queries.begin() + i, queries.begin() + std::min(queries.size(), i + 64))));
  const at::Tensor embeddings = at::cat(chunks);  // [q, d]
  std::vector<std::set<std::string>> truth;
  for (const auto& hits : exact.search_many(embeddings, 10)) {
    std::set<std::string>& t = truth.emplace_back();
    for (const index::Hit& h : hits) t.insert(h.item->id);
  }
  std::vector<std::string> settings = {""};
  if (a.count("--sweep"))
    for (const std::string& p : split(a.at("--sweep"), ';')) settings.push_back(p);
  for (const std::string& params : settings) {
    index::SearcherOptions options = searcher_options(a);
    options.search_params = params;
    const index::Searcher swept =
        params.empty() ? approx : index::Searcher::open(a.at("--approx"), options);
    double hits = 0;
    std::vector<double> seconds;
    for (size_t i = 0; i < queries.size(); ++i) {
      const at::Tensor e = embeddings[static_cast<int64_t>(i)];
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<index::Hit> found = swept.search(e, 10);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      for (const index::Hit& h : found) hits += truth[i].count(h.item->id);
    }
    std::printf(
        "recall@10 of %s [%s] against exact: %.4f over %zu queries; search p50 %.3f ms, "
        "p99 %.3f ms\n",
        approx.factory().c_str(), params.empty() ? "as built" : params.c_str(),
        hits / (10.0 * queries.size()), queries.size(), 1e3 * percentile(seconds, 0.5),
        1e3 * percentile(seconds, 0.99));
  }
  return 0;
}

// The exact top k among `rows` for query q ([d]): every passing part scored.
// queries: [q, d] -> for each query the ids of its exact top k among `rows`
// (ascending), every passing part scored: the passing rows in chunks, each
// one matrix product for all queries, so that a million parts are read once.
std::vector<std::vector<std::string>> exact_top_k(const index::Searcher& s,
                                                  const at::Tensor& queries,
                                                  const std::vector<int64_t>& rows, int64_t k) {
  const int64_t n = queries.size(0);
  std::vector<std::vector<std::string>> ids(static_cast<size_t>(n));
  if (rows.empty()) return ids;
  const at::Tensor all_rows = at::tensor(rows, at::kLong);
  at::Tensor best_scores = at::full({n, 0}, -2.0f), best_rows = at::empty({n, 0}, at::kLong);
  constexpr int64_t kChunk = 65536;
  for (int64_t start = 0; start < all_rows.size(0); start += kChunk) {
    const at::Tensor chunk = all_rows.slice(0, start, std::min(all_rows.size(0), start + kChunk));
    const at::Tensor scores = at::mm(queries, s.embeddings().index_select(0, chunk).t());
    const auto [top, where_in_chunk] = at::topk(scores, std::min<int64_t>(k, chunk.size(0)), 1);
    best_scores = at::cat({best_scores, top}, 1);
    best_rows = at::cat({best_rows, chunk.index({where_in_chunk})}, 1);
    const auto [keep, where] = at::topk(best_scores, std::min<int64_t>(k, best_scores.size(1)), 1);
    best_rows = best_rows.gather(1, where);
    best_scores = keep;
  }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < best_rows.size(1); ++i)
      ids[j].push_back(s.items()[best_rows[j][i].item<int64_t>()].id);
  return ids;
}

int filtered(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  std::vector<std::string> queries = read_queries(need(a, "--queries"));
  if (a.count("--count"))
    queries.resize(std::min(queries.size(), static_cast<size_t>(std::stoll(a.at("--count")))));
  const std::string params = a.count("--search-params") ? a.at("--search-params") : "";
  const index::Searcher s = index::Searcher::open(need(a, "--index"), searcher_options(a));
  std::printf(
      "index %s: %lld parts, %s%s%s; %zu queries; %d intra-op thread(s); text matmuls %s; "
      "matmul %.1f GFLOP/s\n",
      need(a, "--index").c_str(), static_cast<long long>(s.size()), s.factory().c_str(),
      params.empty() ? "" : ", searched with ", params.c_str(), queries.size(), threads,
      std::string(s.text_matmul()).c_str(), bench::matmul_gflops());
  // Largest extents at the 50%, 5% and 0.5% quantiles: the size filters.
  std::vector<double> largest;
  for (const index::Item& item : s.items()) largest.push_back(item.sorted_size_mm()[0]);
  std::sort(largest.begin(), largest.end());
  auto quantile = [&](double share) {
    return largest[static_cast<size_t>(share * static_cast<double>(largest.size() - 1))];
  };
  std::vector<std::string> filters = {"", "bucket<500", "bucket<50", "bucket<5"};
  for (const double share : {0.5, 0.05, 0.005}) {
    char text[64];
    std::snprintf(text, sizeof text, "size<=%.3f", quantile(share));
    filters.push_back(text);
  }
  std::vector<at::Tensor> chunks;
  for (size_t i = 0; i < queries.size(); i += 64)
    chunks.push_back(s.embed_texts(std::vector<std::string>(
        queries.begin() + i, queries.begin() + std::min(queries.size(), i + 64))));
  const at::Tensor embedded = at::cat(chunks);  // [q, d]
  std::printf(
      "| filter | parts passing | share | filter pass | end to end p50 | p99 | queries/s | "
      "search p50 | p99 | recall@10 |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& text : filters) {
    index::SearchOptions options;
    options.k = 10;
    options.filter = index::parse_filter(text);
    // The filter's pass over the catalog, as the first query under it pays
    // it (later ones find its rows kept): the fastest of three.
    std::vector<int64_t> rows;
    double pass = 1e9;
    for (int i = 0; i < 3; ++i)
      pass = std::min(pass, bench::seconds_of([&] { rows = s.rows_passing(options.filter); }));
    const std::vector<std::vector<std::string>> truths = exact_top_k(s, embedded, rows, 10);
    for (int i = 0; i < 5; ++i) (void)s.query_text(queries[i % queries.size()], options);
    std::vector<double> total, search;
    double hits = 0, wanted = 0;
    for (size_t i = 0; i < queries.size(); ++i) {
      total.push_back(bench::seconds_of([&] { (void)s.query_text(queries[i], options); }));
      const at::Tensor q = embedded[static_cast<int64_t>(i)].contiguous();
      index::SearchResult r;
      search.push_back(bench::seconds_of([&] { r = s.query_vector(q, options); }));
      const std::vector<std::string>& truth = truths[i];
      for (const index::Hit& h : r.hits)
        hits += std::find(truth.begin(), truth.end(), h.item->id) != truth.end();
      wanted += static_cast<double>(truth.size());
    }
    double sum = 0;
    for (const double t : total) sum += t;
    std::printf(
        "| %s | %s | %.2f%% | %.2f ms | %.2f ms | %.2f ms | %.1f | %.3f ms | %.3f ms | %.4f |\n",
        text.empty() ? "(none)" : text.c_str(), with_commas(rows.size()).c_str(),
        100.0 * static_cast<double>(rows.size()) / static_cast<double>(s.size()),
        text.empty() ? 0.0 : 1e3 * pass, 1e3 * percentile(total, 0.5),
        1e3 * percentile(total, 0.99), static_cast<double>(total.size()) / sum,
        1e3 * percentile(search, 0.5), 1e3 * percentile(search, 0.99),
        wanted > 0 ? hits / wanted : 1.0);
    std::fflush(stdout);
  }
  return 0;
}

int facts(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  std::vector<std::string> queries = read_queries(need(a, "--queries"));
  if (a.count("--count"))
    queries.resize(std::min(queries.size(), static_cast<size_t>(std::stoll(a.at("--count")))));
  const std::string params = a.count("--search-params") ? a.at("--search-params") : "";
  const index::Searcher s = index::Searcher::open(need(a, "--index"), searcher_options(a));
  std::printf("index %s: %lld parts, %s%s%s; %zu queries; %d intra-op thread(s)\n",
              need(a, "--index").c_str(), static_cast<long long>(s.size()), s.factory().c_str(),
              params.empty() ? "" : ", searched with ", params.c_str(), queries.size(), threads);
  index::SearchOptions with, without;
  with.k = without.k = 10;
  without.rank_by_facts = false;
  for (int i = 0; i < 5; ++i) {
    (void)s.query_text(queries[i % queries.size()], with);
    (void)s.query_text(queries[i % queries.size()], without);
  }
  std::vector<double> on, off, on_stated, off_stated;
  for (size_t i = 0; i < queries.size(); ++i) {
    // Each text runs twice, and the second run of a text finds what the first
    // left warm: the order alternates so that neither side is always second.
    const std::string& q = queries[i];
    index::SearchResult r;
    double t_on = 0, t_off = 0;
    auto run_on = [&] { t_on = bench::seconds_of([&] { r = s.query_text(q, with); }); };
    auto run_off = [&] { t_off = bench::seconds_of([&] { (void)s.query_text(q, without); }); };
    if (i % 2 == 0) {
      run_on();
      run_off();
    } else {
      run_off();
      run_on();
    }
    on.push_back(t_on);
    off.push_back(t_off);
    if (!r.stated.empty()) {
      on_stated.push_back(t_on);
      off_stated.push_back(t_off);
    }
  }
  // "paired": the median over queries of (with − alone) for the same text,
  // which the spread of query lengths blurs less than the difference of the
  // two medians.
  std::printf(
      "| queries | count | p50 with facts | p50 embedding alone | p50 added | paired added | "
      "p99 with | p99 alone |\n|---|---|---|---|---|---|---|---|\n");
  auto row = [](const char* name, const std::vector<double>& a_on,
                const std::vector<double>& a_off) {
    if (a_on.empty()) return;
    std::vector<double> added(a_on.size());
    for (size_t i = 0; i < a_on.size(); ++i) added[i] = a_on[i] - a_off[i];
    const double p50_on = percentile(a_on, 0.5), p50_off = percentile(a_off, 0.5);
    std::printf("| %s | %zu | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", name,
                a_on.size(), 1e3 * p50_on, 1e3 * p50_off, 1e3 * (p50_on - p50_off),
                1e3 * percentile(added, 0.5), 1e3 * percentile(a_on, 0.99),
                1e3 * percentile(a_off, 0.99));
  };
  row("all", on, off);
  row("stating a fact", on_stated, off_stated);
  return 0;
}

int duplicates(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  index::SearcherOptions without_model;
  without_model.load_model = false;
  const index::Searcher s = index::Searcher::open(need(a, "--index"), without_model);
  index::DuplicateOptions options;
  const std::string kinds = a.count("--kinds") ? a.at("--kinds") : "exact,mirrored,near";
  options.exact = kinds.find("exact") != std::string::npos;
  options.mirrored = kinds.find("mirrored") != std::string::npos;
  options.near = kinds.find("near") != std::string::npos;
  std::printf("index %s: %lld parts, %s; %d intra-op thread(s); kinds %s\n",
              need(a, "--index").c_str(), static_cast<long long>(s.size()), s.factory().c_str(),
              threads, kinds.c_str());
  const index::DuplicateReport r = index::find_duplicates(s, options);
  std::map<std::string, int64_t> clusters;
  for (const index::DuplicateCluster& c : r.clusters) ++clusters[c.kind];
  std::printf(
      "duplicates in %.2f s: %lld exact clusters (%lld parts), %lld mirrored (%lld parts), %lld "
      "near (%lld parts)\n",
      r.seconds, static_cast<long long>(clusters["exact"]), static_cast<long long>(r.exact_parts),
      static_cast<long long>(clusters["mirrored"]), static_cast<long long>(r.mirrored_parts),
      static_cast<long long>(clusters["near"]), static_cast<long long>(r.near_parts));
  return 0;
}

int encode(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  const std::vector<std::string> queries = read_queries(need(a, "--queries"));
  const index::Searcher searcher = index::Searcher::open(need(a, "--index"), searcher_options(a));
  std::vector<int64_t> sizes;
  for (const std::string& b : split(a.count("--batches") ? a.at("--batches") : "1,4,16", ','))
    sizes.push_back(std::stoll(b));
  const int rounds = a.count("--rounds") ? std::stoi(a.at("--rounds")) : 20;
  std::printf(
      "text encoder, %d intra-op thread(s), %zu queries, %d rounds, text matmuls %s; matmul %.1f "
      "GFLOP/s\n",
      threads, queries.size(), rounds, std::string(searcher.text_matmul()).c_str(),
      bench::matmul_gflops());
  std::map<int64_t, std::vector<double>> seconds;
  size_t next = 0;
  auto batch_of = [&](int64_t b) {
    std::vector<std::string> texts;
    for (int64_t i = 0; i < b; ++i) texts.push_back(queries[next++ % queries.size()]);
    return texts;
  };
  for (const int64_t b : sizes) (void)searcher.embed_texts(batch_of(b));  // warm-up
  for (int r = 0; r < rounds; ++r) {
    for (const int64_t b : sizes) {
      const std::vector<std::string> texts = batch_of(b);
      seconds[b].push_back(bench::seconds_of([&] { (void)searcher.embed_texts(texts); }));
    }
  }
  std::printf("| batch | ms per batch (median) | p10-p90 | ms per text |\n|---|---|---|---|\n");
  for (const int64_t b : sizes) {
    const bench::Stats st = bench::summarize(seconds[b]);
    std::printf("| %lld | %.2f | %.2f-%.2f | %.2f |\n", static_cast<long long>(b), 1e3 * st.median,
                1e3 * st.p10, 1e3 * st.p90, 1e3 * st.median / static_cast<double>(b));
  }
  return 0;
}

int precision(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  std::vector<std::string> queries = read_queries(need(a, "--queries"));
  if (a.count("--count"))
    queries.resize(std::min(queries.size(), static_cast<size_t>(std::stoll(a.at("--count")))));
  index::SearcherOptions options = searcher_options(a);
  options.text_matmul = "fp32";
  const index::Searcher fp32 = index::Searcher::open(need(a, "--index"), options);
  options.text_matmul = "bf16";
  const index::Searcher bf16 = index::Searcher::open(need(a, "--index"), options);
  std::printf("index %s: %lld parts, %s; %zu queries; %d intra-op thread(s); matmul %.1f GFLOP/s\n",
              need(a, "--index").c_str(), static_cast<long long>(fp32.size()),
              fp32.factory().c_str(), queries.size(), threads, bench::matmul_gflops());
  for (int i = 0; i < 5; ++i)
    for (const index::Searcher* s : {&fp32, &bf16})
      (void)s->search_text(queries[i % queries.size()], 10);
  struct Timings {
    std::vector<double> encode, total;
  };
  Timings t32, t16;
  std::vector<double> cosines;
  double overlap = 0;
  for (const std::string& q : queries) {
    std::vector<index::Hit> hits32, hits16;
    at::Tensor e32, e16;
    auto run = [&q](const index::Searcher& s, Timings& t, at::Tensor& e,
                    std::vector<index::Hit>& hits) {
      const auto t0 = std::chrono::steady_clock::now();
      e = s.embed_text(q);
      const auto t1 = std::chrono::steady_clock::now();
      hits = s.search(e, 10);
      const auto t2 = std::chrono::steady_clock::now();
      t.encode.push_back(std::chrono::duration<double>(t1 - t0).count());
      t.total.push_back(std::chrono::duration<double>(t2 - t0).count());
    };
    run(fp32, t32, e32, hits32);
    run(bf16, t16, e16, hits16);
    cosines.push_back(at::dot(e32, e16).item<double>() /
                      (e32.norm().item<double>() * e16.norm().item<double>()));
    std::set<std::string> truth;
    for (const index::Hit& h : hits32) truth.insert(h.item->id);
    for (const index::Hit& h : hits16) overlap += static_cast<double>(truth.count(h.item->id));
  }
  std::printf(
      "| text matmuls | encode p50 | p99 | end to end p50 | p99 |\n|---|---|---|---|---|\n");
  for (const auto& [name, t] : {std::pair{"fp32", &t32}, std::pair{"bf16", &t16}})
    std::printf("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", name,
                1e3 * percentile(t->encode, 0.5), 1e3 * percentile(t->encode, 0.99),
                1e3 * percentile(t->total, 0.5), 1e3 * percentile(t->total, 0.99));
  std::printf(
      "bf16 against fp32: encode p50 ratio %.2f, end-to-end p50 ratio %.2f; embedding cosine min "
      "%.6f, p1 %.6f, median %.6f; top-10 overlap %.4f\n",
      percentile(t16.encode, 0.5) / percentile(t32.encode, 0.5),
      percentile(t16.total, 0.5) / percentile(t32.total, 0.5), percentile(cosines, 0.0),
      percentile(cosines, 0.01), percentile(cosines, 0.5),
      overlap / (10.0 * static_cast<double>(queries.size())));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "grow") return grow(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "query") return query(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "encode") return encode(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "filtered") return filtered(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "duplicates") return duplicates(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "facts") return facts(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "precision") return precision(parse(argc, argv, 2));
    std::fprintf(
        stderr,
        "usage: search_bench grow|query|filtered|facts|duplicates|encode|precision ... (see the "
        "top of "
        "search_bench.cc)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_bench: %s\n", e.what());
    return 2;
  }
}
