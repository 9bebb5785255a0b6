// libFuzzer: the safetensors reader on any bytes. A file it does not refuse
// (cadclip::Error) must give tensors whose bytes lie inside the file, and
// converting them and scanning their health must run without a fault.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/tensor_health.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      "/tmp/cadclip_fuzz_safetensors_" + std::to_string(::getpid()) + ".safetensors";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();
  if (size > 0) std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    const cadclip::SafetensorsReader reader = cadclip::SafetensorsReader::open(path);
    for (const cadclip::TensorInfo& t : reader.tensors()) {
      const auto bytes = reader.bytes(t);
      if (bytes.size() != t.end - t.begin || t.end > size) std::abort();
      if (static_cast<uint64_t>(t.numel()) * cadclip::dtype_size(t.dtype) != bytes.size())
        std::abort();
      if (t.dtype != cadclip::DType::kF8E5M2 && t.dtype != cadclip::DType::kF8E4M3)
        (void)reader.to_f32(t);
    }
    (void)cadclip::scan_health(reader);
  } catch (const cadclip::Error&) {
    // Refused with a message: what a bad file must get.
  }
  return 0;
}
