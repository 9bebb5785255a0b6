// The precision of the text encoders' inference matmuls on the CPU.
//
// A query's text embedding is most of a search's time on the CPU, and most of
// that is the encoder's linear layers. On CPUs that multiply bfloat16
// natively (AMX or AVX512-BF16), oneDNN runs them in bfloat16, and a query
// encodes in about half the float32 time; everything else (embeddings, attention,
// LayerNorm, pooling, the residual stream) stays float32. MiniLM's sentence
// embeddings keep a cosine of about 0.9999 with the float32 ones
// (docs/PERFORMANCE.md, "Query encoding in bfloat16").
//
// Training, evaluation and the text cache always run in float32: the choice
// applies only inside a TextMatmulScope, which the searcher opens around its
// query encoding.
#pragma once

#include <string_view>

namespace cadclip::text {

enum class MatmulPrecision { kFloat32, kBFloat16 };

// True when this CPU multiplies bfloat16 natively and LibTorch has oneDNN's
// linear ops: where bfloat16 is faster, not emulated.
bool cpu_has_fast_bf16();

// "fp32", "bf16" or "auto" (bf16 where cpu_has_fast_bf16(), else fp32).
// "bf16" on a CPU without fast bfloat16 is refused by name, since it would
// be slower than fp32. Throws cadclip::Error naming `source` otherwise.
MatmulPrecision parse_matmul_precision(std::string_view name, std::string_view source);
std::string_view matmul_precision_name(MatmulPrecision precision);  // "fp32", "bf16"

// While one lives, the text encoders' no-grad linear layers on the CPU run
// in `precision` on this thread (like c10::InferenceMode, thread-local and
// nestable). Outputs stay float32 either way.
class TextMatmulScope {
 public:
  explicit TextMatmulScope(MatmulPrecision precision);
  ~TextMatmulScope();
  TextMatmulScope(const TextMatmulScope&) = delete;
  TextMatmulScope& operator=(const TextMatmulScope&) = delete;

 private:
  MatmulPrecision previous_;
};

// The precision the current thread's scope asks for (fp32 outside any).
MatmulPrecision current_matmul_precision();

}  // namespace cadclip::text
