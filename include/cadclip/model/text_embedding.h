// Texts to a two-tower model's text embeddings (the text tower, the quantity
// branch and the text head): the one path that the searcher, `cadclip embed
// --checkpoint` and the Python module's Model.embed_text take, so that they
// agree bit for bit on the same texts and grouping.
#pragma once

#include <ATen/core/Tensor.h>

#include <span>
#include <string>

#include "cadclip/model/model_config.h"
#include "cadclip/text/length_groups.h"

namespace cadclip::model {

// texts -> [n, embed_dim] fp32 on the CPU, unit rows, in input order ([0,
// embed_dim] for none), computed in inference mode in the groups `grouping`
// makes (text/length_groups.h). The same texts and grouping give the same bits.
at::Tensor embed_texts(BuiltModel& built, std::span<const std::string> texts,
                       const text::LengthGrouping& grouping);

}  // namespace cadclip::model
