// cadclip's side of bench/text/run.py: loads a text model once, then answers
// one command per stdin line with the seconds one run took, so that the
// Python script can alternate cadclip and transformers runs in one process
// tree. Text in, normalised embedding out: tokenisation is timed too.
//
//   text_bench MODEL_FOLDER TEXTS_JSON THREADS
//   stdin:  "one I"       embed text I of "single" alone (batch 1)
//           "batch B"     embed all of "batch", in sub-batches of B sorted by length
//           "dump PATH"   write the "batch" embeddings (batch 32) to PATH (safetensors)
//           "quit"
//   stdout: one line per command: seconds, or "ok"
#include <ATen/ATen.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cadclip/core/file.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/text/text_model.h"
#include "common/bench_util.h"

int main(int argc, char** argv) {
  using namespace cadclip;
  if (argc != 4) {
    std::cerr << "usage: text_bench MODEL_FOLDER TEXTS_JSON THREADS\n";
    return 2;
  }
  const int threads = bench::set_threads(std::stoi(argv[3]));
  const text::TextModel model = text::load_text_model(argv[1]);
  const auto texts = nlohmann::json::parse(read_text_file(argv[2]));
  const auto single = texts["single"].get<std::vector<std::string>>();
  const auto batch = texts["batch"].get<std::vector<std::string>>();
  std::cerr << "text_bench: " << model.folder.string() << ", threads=" << threads
            << ", LibTorch matmul 1024^2 fp32: " << bench::matmul_gflops() << " GFLOP/s\n";
  std::string command;
  while (std::cin >> command) {
    if (command == "one") {
      size_t index = 0;
      std::cin >> index;
      const double s = bench::seconds_of(
          [&] { (void)model.embed(std::span(single).subspan(index % single.size(), 1)); });
      std::cout << s << std::endl;
    } else if (command == "batch") {
      int64_t sub = 0;
      std::cin >> sub;
      const double s = bench::seconds_of([&] { (void)model.embed(batch, true, sub); });
      std::cout << s << std::endl;
    } else if (command == "dump") {
      std::string path;
      std::cin >> path;
      const at::Tensor e = model.embed(batch, true, 32).contiguous();
      SafetensorsWriter writer;
      writer.add_f32("embeddings", {e.size(0), e.size(1)},
                     std::span<const float>(e.data_ptr<float>(), static_cast<size_t>(e.numel())));
      writer.write(path);
      std::cout << "ok" << std::endl;
    } else if (command == "quit") {
      break;
    } else {
      std::cerr << "text_bench: unknown command " << command << "\n";
      return 2;
    }
  }
  return 0;
}
