// Token ids against transformers' tokenizers on the fixture corpus.
#include <gtest/gtest.h>

#include "cadclip/core/error.h"
#include "cadclip/text/sentencepiece_tokenizer.h"
#include "cadclip/text/wordpiece_tokenizer.h"
#include "fixtures.h"

namespace cadclip::text {
namespace {

using testing::corpus;
using testing::data_dir;
using testing::read_json;

using Ids = std::vector<std::vector<int64_t>>;

// Every text of the corpus, full and truncated, against the references.
void expect_same_ids(const Tokenizer& tokenizer, const nlohmann::json& reference,
                     int64_t truncate_at) {
  const std::vector<std::string> texts = corpus();
  const Ids full = reference["full"].get<Ids>();
  const Ids truncated = reference["truncated"].get<Ids>();
  ASSERT_EQ(full.size(), texts.size());
  ASSERT_GE(texts.size(), 200u);
  int mismatches = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto ids = tokenizer.encode(texts[i]);
    if (ids != full[i] && ++mismatches <= 5)
      ADD_FAILURE() << "text " << i << " '" << texts[i].substr(0, 80)
                    << "': " << ::testing::PrintToString(ids) << " vs "
                    << ::testing::PrintToString(full[i]);
    EXPECT_EQ(tokenizer.encode(texts[i], truncate_at), truncated[i]) << "text " << i;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(SentencePieceTokenizer, MatchesTheSentencePieceBasedDebertaV2Tokenizer) {
  const nlohmann::json ids = read_json("tokenizer_ids.json");
  SentencePieceTokenizer tokenizer(data_dir() / "deberta_v3" / "spm.model");
  EXPECT_EQ(tokenizer.pad_id(), 0);
  EXPECT_EQ(tokenizer.cls_id(), 1);
  EXPECT_EQ(tokenizer.sep_id(), 2);
  EXPECT_EQ(tokenizer.unk_id(), 3);
  EXPECT_EQ(tokenizer.mask_id(), ids["deberta_mask_id"].get<int64_t>());
  expect_same_ids(tokenizer, ids["deberta"], ids["truncate_at"].get<int64_t>());
}

TEST(SentencePieceTokenizer, MatchesTransformers5WhereNoNfkcNormalisationApplies) {
  // transformers 5 rebuilt DebertaV2Tokenizer on `tokenizers` with NFC
  // instead of the model's nmt_nfkc normalisation; ids agree wherever that
  // difference cannot show.
  const nlohmann::json ids = read_json("tokenizer_ids.json");
  SentencePieceTokenizer tokenizer(data_dir() / "deberta_v3" / "spm.model");
  const std::vector<std::string> texts = corpus();
  const Ids fast = ids["deberta_transformers5"]["full"].get<Ids>();
  const auto normalizes = ids["spm_normalizes"].get<std::vector<bool>>();
  size_t compared = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (normalizes[i]) continue;
    ++compared;
    EXPECT_EQ(tokenizer.encode(texts[i]), fast[i]) << "text " << i << " '" << texts[i] << "'";
  }
  EXPECT_GE(compared, 200u);
}

TEST(WordPieceTokenizer, UncasedMatchesBertTokenizer) {
  const nlohmann::json ids = read_json("tokenizer_ids.json");
  auto tokenizer = load_tokenizer(data_dir() / "bert");
  EXPECT_EQ(tokenizer->kind(), "wordpiece");
  expect_same_ids(*tokenizer, ids["bert_uncased"], ids["truncate_at"].get<int64_t>());
}

TEST(WordPieceTokenizer, CasedMatchesBertTokenizer) {
  const nlohmann::json ids = read_json("tokenizer_ids.json");
  WordPieceOptions options;
  options.lowercase = false;
  auto tokenizer = WordPieceTokenizer::from_vocab_txt(data_dir() / "bert" / "vocab.txt", options);
  expect_same_ids(tokenizer, ids["bert_cased"], ids["truncate_at"].get<int64_t>());
}

TEST(WordPieceTokenizer, TokenizerJsonOnlyFolder) {
  const nlohmann::json ids = read_json("tokenizer_ids.json");
  auto tokenizer = load_tokenizer(data_dir() / "bert_json");
  expect_same_ids(*tokenizer, ids["bert_cased"], ids["truncate_at"].get<int64_t>());
}

TEST(WordPieceTokenizer, RealMiniLmVocabularyBothWays) {
  if (!std::filesystem::exists(testing::minilm_dir() / "vocab.txt"))
    GTEST_SKIP() << "no all-MiniLM-L6-v2 at " << testing::minilm_dir();
  const nlohmann::json ids = read_json("tokenizer_ids.json");
  const int64_t cut = ids["truncate_at"].get<int64_t>();
  auto from_vocab = load_tokenizer(testing::minilm_dir());
  EXPECT_EQ(from_vocab->cls_id(), 101);
  EXPECT_EQ(from_vocab->unk_id(), 100);
  expect_same_ids(*from_vocab, ids["minilm"], cut);
  auto from_json =
      WordPieceTokenizer::from_tokenizer_json(testing::minilm_dir() / "tokenizer.json");
  expect_same_ids(from_json, ids["minilm"], cut);
}

TEST(Tokenizer, BatchPadsToTheLongestRowWithMasks) {
  auto tokenizer = load_tokenizer(data_dir() / "bert");
  const std::vector<std::string> texts = {"a flange", "", "an M6 nut with a 10 mm hex"};
  const TokenBatch batch = tokenizer->batch(texts, /*max_length=*/6);
  ASSERT_EQ(batch.batch, 3);
  ASSERT_EQ(batch.length, 6);
  EXPECT_EQ(batch.lengths[1], 2);
  EXPECT_EQ(batch.lengths[2], 6);
  for (int64_t r = 0; r < batch.batch; ++r) {
    for (int64_t j = 0; j < batch.length; ++j) {
      const int64_t at = r * batch.length + j;
      EXPECT_EQ(batch.mask[at], j < batch.lengths[r] ? 1 : 0);
      if (j >= batch.lengths[r]) EXPECT_EQ(batch.ids[at], tokenizer->pad_id());
    }
    EXPECT_EQ(batch.ids[r * batch.length], tokenizer->cls_id());
    EXPECT_EQ(batch.ids[r * batch.length + batch.lengths[r] - 1], tokenizer->sep_id());
  }
  EXPECT_THROW(tokenizer->encode("x", 1), Error);
}

TEST(Tokenizer, MissingFilesAreClearErrors) {
  try {
    load_tokenizer(data_dir());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spm.model"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SentencePieceTokenizer(data_dir() / "corpus.json"), Error);
}

}  // namespace
}  // namespace cadclip::text
