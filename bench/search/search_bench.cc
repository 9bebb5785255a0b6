// search_bench grow  --from INDEX --out BIG --count N [--noise S] [--factory F] [--seed K]
//   A library of N parts from a real index of n < N parts: the n real
//   embeddings, then N - n perturbed copies (real row + S * gaussian noise per
//   dimension, renormalised; ids "<id>~<j>", same thumbnail and metadata).
// search_bench query --index EXACT [--approx APPROX] --queries FILE [--threads T]
//   Text queries (one per line) end to end: tokenize + encode + search, p50 and
//   p99 over all queries after a warm-up; search alone; recall@10 of APPROX's
//   top 10 against EXACT's on the same queries.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/index/searcher.h"
#include "common/bench_util.h"
#include "index/store.h"

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

int grow(const std::map<std::string, std::string>& a) {
  const fs::path from = need(a, "--from"), out = need(a, "--out");
  const int64_t count = std::stoll(need(a, "--count"));
  const double noise = a.count("--noise") ? std::stod(a.at("--noise")) : 0.02;
  const std::string factory = a.count("--factory") ? a.at("--factory") : "Flat";
  const std::string params =
      a.count("--search-params")
          ? a.at("--search-params")
          : (factory.find("HNSW") != std::string::npos ? "efSearch=128" : "");
  torch::manual_seed(a.count("--seed") ? std::stoll(a.at("--seed")) : 0);
  const index::detail::Catalog source = index::detail::Catalog::open(from, false);
  const std::vector<index::detail::StoredItem> real = source.items();
  if (real.empty()) throw Error("search_bench grow: the source index is empty");
  const int64_t d = static_cast<int64_t>(real.front().embedding.size());
  fs::create_directories(out / index::detail::kThumbnailDir);
  fs::remove(out / index::detail::kCatalogFile);
  for (const auto& entry : fs::directory_iterator(from / index::detail::kThumbnailDir))
    fs::copy_file(entry.path(), out / index::detail::kThumbnailDir / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
  index::detail::Catalog catalog = index::detail::Catalog::open(out, true);
  catalog.begin();
  for (const char* key :
       {"checkpoint_identity", "checkpoint", "embed_dim", "library", "catalog_version"})
    catalog.set_meta(key, source.meta(key).value_or(""));
  catalog.set_meta("factory", factory);
  catalog.set_meta("search_params", params);
  const int64_t n = static_cast<int64_t>(real.size());
  const int64_t chunk = 4096;
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
      index::Item item = real[i % n].item;
      if (i >= n) {
        item.id += "~" + std::to_string(i);
        item.name = item.id;
        item.caption.clear();
      }
      const at::Tensor r = rows[i - start].contiguous();
      catalog.put(item, {r.data_ptr<float>(), static_cast<size_t>(d)});
    }
  }
  const std::vector<index::detail::StoredItem> all = catalog.items();
  std::vector<float> matrix;
  matrix.reserve(all.size() * d);
  for (const auto& s : all) matrix.insert(matrix.end(), s.embedding.begin(), s.embedding.end());
  const double seconds = bench::seconds_of([&] {
    index::detail::VectorIndex v = index::detail::VectorIndex::build(
        matrix.data(), static_cast<int64_t>(all.size()), d, factory);
    v.write(out / index::detail::kVectorsFile);
  });
  catalog.commit();
  std::printf(
      "grew %s: %zu parts (%lld real, the rest perturbed with noise %.3f per dim), "
      "FAISS %s built in %.1f s\n",
      out.c_str(), all.size(), static_cast<long long>(n), noise, factory.c_str(), seconds);
  return 0;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

int query(const std::map<std::string, std::string>& a) {
  const int threads = bench::set_threads(a.count("--threads") ? std::stoi(a.at("--threads")) : 1);
  std::vector<std::string> queries;
  {
    std::ifstream file(need(a, "--queries"));
    std::string line;
    while (std::getline(file, line))
      if (!line.empty()) queries.push_back(line);
  }
  if (queries.empty()) throw Error("search_bench: no queries");
  const index::Searcher exact = index::Searcher::open(need(a, "--index"));
  std::printf(
      "index %s: %lld parts, %s; %zu queries; %d intra-op thread(s); matmul %.1f "
      "GFLOP/s\n",
      need(a, "--index").c_str(), static_cast<long long>(exact.size()), exact.factory().c_str(),
      queries.size(), threads, bench::matmul_gflops());
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
        "%-8s end to end p50 %.2f ms, p99 %.2f ms | encode p50 %.2f ms | search p50 "
        "%.2f ms, p99 %.2f ms\n",
        label.c_str(), 1e3 * percentile(total, 0.5), 1e3 * percentile(total, 0.99),
        1e3 * percentile(encode, 0.5), 1e3 * percentile(search, 0.5),
        1e3 * percentile(search, 0.99));
  };
  measure(exact, exact.factory());
  if (a.count("--approx")) {
    const index::Searcher approx = index::Searcher::open(a.at("--approx"));
    measure(approx, approx.factory());
    double hits = 0;
    for (const std::string& q : queries) {
      const at::Tensor e = exact.embed_text(q);
      std::set<std::string> truth;
      for (const index::Hit& h : exact.search(e, 10)) truth.insert(h.item->id);
      for (const index::Hit& h : approx.search(e, 10)) hits += truth.count(h.item->id);
    }
    std::printf("recall@10 of %s against exact: %.4f over %zu queries\n", approx.factory().c_str(),
                hits / (10.0 * queries.size()), queries.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "grow") return grow(parse(argc, argv, 2));
    if (argc >= 2 && std::string(argv[1]) == "query") return query(parse(argc, argv, 2));
    std::fprintf(stderr, "usage: search_bench grow|query ... (see the top of search_bench.cc)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_bench: %s\n", e.what());
    return 2;
  }
}
