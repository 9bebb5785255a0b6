// LibTorch tensors in and out of safetensors files (core/safetensors.h), for
// checkpoints, saved embeddings and anything else that stores tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "cadclip/core/safetensors.h"

namespace cadclip::data {

// The safetensors dtype of a tensor; throws cadclip::Error for one it cannot hold.
DType safetensors_dtype(const at::Tensor& tensor);

// Adds a CPU copy of `tensor` (any device, made contiguous) under `name`.
void add_tensor(SafetensorsWriter& writer, const std::string& name, const at::Tensor& tensor);

// A CPU tensor holding a copy of the stored values, in the stored dtype
// (F8 kinds excepted). Throws cadclip::Error naming the file and tensor.
at::Tensor read_tensor(const SafetensorsReader& file, const TensorInfo& info);

}  // namespace cadclip::data
