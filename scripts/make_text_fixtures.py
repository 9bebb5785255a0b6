#!/usr/bin/env python3
"""Makes the fixtures of cadclip's text layer (tests/fixtures/text/).

Reference only: the product never runs Python. Run by hand from the project
root with the venv of scripts/setup.sh:

    /opt/cadclip/venv/bin/python scripts/make_text_fixtures.py

Pinned versions (the script refuses others, since the fixtures encode their
exact behaviour): torch 2.11.0, transformers 5.24.0, tokenizers 0.23.3,
sentencepiece 0.2.3, safetensors 0.8.0, sentence-transformers 6.2.0, and
protobuf 7.36.2 (transformers needs it to read spm.model).

What it writes, all small:
  corpus.json            the caption corpus (>= 200 varied texts) and the
                         sentences of the MiniLM check
  bert/vocab.txt         a WordPiece vocabulary trained on the corpus
  tokenizer_ids.json     ids from transformers' DebertaV2Tokenizer and
                         BertTokenizer for every corpus text, full and truncated
  deberta_v*/spm.model   a SentencePiece unigram model trained on the corpus,
                         DeBERTa-v3 style ids ([PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3,
                         [MASK] added after the vocabulary), in both folders
  deberta_v2/            random DeBERTa-v2 (no buckets, separate position
                         projections, conv layer, embedding projection), F32,
                         no prefix
  deberta_v3/            random DeBERTa-v3 style (position_buckets,
                         share_att_key, norm_rel_ebd layer_norm, p2c|c2p), F16,
                         saved with the MLM head (`deberta.` prefix)
  bert/                  random BERT, BF16, saved with the MLM head (`bert.`
                         prefix), vocab.txt
  bert_json/             the same BERT tokenizer as tokenizer.json only (cased)
  */reference.safetensors  input_ids, attention_mask, last_hidden_state
                         for a padded batch of mixed lengths
  minilm_expected.safetensors  sentence-transformers embeddings of the real
                         all-MiniLM-L6-v2 for the MiniLM sentences, and ids
"""

import json
import os
import random
import shutil
import sys
import tempfile

PINNED = {
    "torch": "2.11.0",
    "transformers": "5.24.0",
    "tokenizers": "0.23.3",
    "sentencepiece": "0.2.3",
    "safetensors": "0.8.0",
    "sentence_transformers": "6.2.0",
    "google.protobuf": "7.36.2",
}

OUT = os.path.join("tests", "fixtures", "text")
MINILM = os.environ.get("CADCLIP_MINILM", "/opt/cadclip/models/all-MiniLM-L6-v2")
TRUNCATE_AT = 24  # max_length of the truncated tokenizer references

LONG_TEXT = (
    "This flanged bearing housing is machined from a single aluminium billet; the base plate "
    "measures 120 mm by 80 mm by 12 mm and carries four Ø9 mm through holes on a 100 × 60 mm "
    "pattern, each with a Ø15 mm counterbore 8.5 mm deep, while the central boss rises 35 mm "
    "above the plate, holds a 6204 bearing in a Ø47 H7 bore, and ends in a 1 × 45° chamfer; "
    "two M6×1.0 tapped holes on the top face, 40 mm apart, fix a cover, and a 3 mm wide slot "
    "cut across the boss lets grease escape. All unspecified fillets are R0.5, the surface "
    "finish is Ra 1.6 µm on the bore and Ra 3.2 µm elsewhere, and the general tolerance is "
    "ISO 2768-mK. "
)

HANDWRITTEN = [
    "A flange with six bolt holes, 120 mm outer diameter.",
    "Ø12 mm shaft, 80 mm long, with a 2 mm keyway.",
    "M6×1.0 hex nut, 10 mm across flats.",
    "Washer: inner Ø6.4, outer Ø12, thickness 1.6 mm.",
    "Scale factor 0.75 applied to the whole part.",
    "Rectangular plate 100x50x5 mm with four M4 holes",
    "L-bracket, 3 mm sheet, bend radius R2, 90° bend.",
    "Spur gear: module 1.5, 24 teeth, 20° pressure angle, bore Ø8 H7.",
    "Tolerance ±0.05 mm on the bore; Ra 0.8 µm finish.",
    "1/4-20 UNC tapped hole, 12.7 mm deep.",
    "Pipe, 2\" schedule 40, length 300 mm.",
    "Cylinder Ø30×40",
    "Cube 10 x 10 x 10.",
    "A block with a pocket (20 mm × 15 mm × 5 mm) and two slots.",
    "Counterbored hole: Ø6.6 thru, ⌴ Ø11 × 6.8 deep.",
    "Chamfer 0.5×45°, fillet r=1.25.",
    "Thread M8x1.25-6g, length 25.",
    "Shaft with circlip groove DIN 471, Ø20 mm.",
    "Hexagonal prism, 17 mm AF, 8 mm thick!",
    "Enclosure: 150 × 100 × 60 mm, wall 2.5 mm, 4 bosses with M3 inserts.",
    "Rändelmutter M5, Edelstahl, Höhe 7,5 mm.",
    "Pièce de fixation en acier, épaisseur 4 mm, perçage Ø5,5.",
    "Brida con seis agujeros; diámetro exterior 140 mm.",
    "Ćwierć cala, żeliwo, część zamienna.",
    "Naïve café-style façade bracket — coöperate, résumé.",
    "Ångström-level flatness? No: 0.01 mm is enough.",
    "法兰盘，外径120毫米，六个螺栓孔。",
    "六角ナット M6、ステンレス製。",
    "Фланец с шестью отверстиями, диаметр 120 мм.",
    "Φλάντζα με έξι οπές.",
    "شفة بستة ثقوب",
    "플랜지 직경 120 mm",
    "नट और बोल्ट",
    "Emoji test 🔩🔧 bolt and wrench.",
    "Tabs\tand\nnewlines\r\nin a caption.",
    "   leading and trailing spaces   ",
    "multiple     internal      spaces",
    "UPPER CASE CAPTION WITH NUMBERS 42 AND 3.14159",
    "MiXeD CaSe Bracket-Assembly_v2.step",
    "part#123 (rev. B) [draft] {internal} <ok> @home $5 %50 ^2 &co *bold* ~approx `code` |pipe|",
    "Quotes: 'single', \"double\", «guillemets», „low“, ‘curly’.",
    "Dashes - – — and ellipsis …",
    "Math: a+b=c, x² + y² = r², ∑, √2, π·r², ≤ ≥ ≠ ≈ ∞.",
    "Zero-width joiner: a\u200db, soft hyphen: co\u00adoperate.",
    "Non-breaking\u00a0space and thin\u2009space.",
    "Control chars\u0007 and \u001b escapes.",
    "Fullwidth ＡＢＣ１２３ and ｶﾀｶﾅ halfwidth.",
    "Ligatures: ﬁnish, ﬂange, ﬀ.",
    "Superscript ² and subscript ₂ and ½ ¼ ¾.",
    "Roman numerals Ⅳ and circled ① ②.",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "supercalifragilisticexpialidocious-bracket",
    "a",
    ".",
    "42",
    "Ø",
    "×",
    "",
    " ",
    "   ",
    "\t\n",
    LONG_TEXT,
    LONG_TEXT * 2,
]

SHAPES = ["flange", "bracket", "shaft", "washer", "nut", "bolt", "plate", "block", "pipe", "gear",
          "enclosure", "spacer", "bushing", "hinge", "clamp", "pulley", "housing", "cover", "rail",
          "knob"]
MATERIALS = ["steel", "aluminium", "brass", "ABS plastic", "stainless steel", "titanium", "PEEK",
             "cast iron"]
FEATURES = ["a through hole", "two blind holes", "a keyway", "a chamfered edge", "four fillets",
            "a countersunk hole", "a slot", "a pocket", "a rib", "a boss", "an M5 thread",
            "a knurled surface", "six bolt holes on a circle", "a central bore"]
LEVELS = [
    "A {shape}.",
    "A {material} {shape} with {feature}.",
    "{Shape} of {a} mm by {b} mm, {c} mm thick, with {feature}.",
    "The {shape} is Ø{d} mm and {a} mm long; it has {feature} and {feature2}.",
    "Create a {shape}: sketch a circle of radius {r} at ({x}, {y}), extrude {a} mm, "
    "then add {feature}.",
    "{material} {shape}, M{m}×{p} thread, tolerance ±{t} mm, {angle}° chamfer.",
    "{n}x {shape}s in {material}, each {a}×{b}×{c} mm",
]


def make_corpus():
    rng = random.Random(20261129)
    corpus = list(HANDWRITTEN)
    while len(corpus) < 260:
        shape = rng.choice(SHAPES)
        feature, feature2 = rng.sample(FEATURES, 2)
        text = rng.choice(LEVELS).format(
            shape=shape, Shape=shape.capitalize(), material=rng.choice(MATERIALS),
            feature=feature, feature2=feature2, a=rng.randint(5, 400), b=rng.randint(5, 200),
            c=rng.choice(["1.5", "2", "3", "4.75", "10", "0.8"]), d=rng.randint(3, 250),
            r=rng.choice(["0.75", "2.5", "12", "40"]), x=rng.randint(-50, 50),
            y=rng.randint(-50, 50), m=rng.choice([3, 4, 5, 6, 8, 10, 12]),
            p=rng.choice(["0.5", "0.7", "0.8", "1.0", "1.25", "1.5", "1.75"]),
            t=rng.choice(["0.01", "0.05", "0.1", "0.2"]), angle=rng.choice([30, 45, 60, 90]),
            n=rng.randint(2, 12))
        corpus.append(text)
    return corpus


MINILM_SENTENCES = [
    "A flange with six bolt holes, 120 mm outer diameter.",
    "Ø12 mm shaft, 80 mm long, with a 2 mm keyway.",
    "M6×1.0 hex nut, 10 mm across flats.",
    "A small steel washer.",
    "An aluminium L-bracket with two mounting holes.",
    "Spur gear with 24 teeth and an 8 mm bore.",
    "Rectangular plate 100x50x5 mm with four M4 holes",
    "A cylindrical spacer, 0.75 inch long.",
    "Pipe elbow, 90 degrees.",
    "Enclosure box with a removable lid and ventilation slots.",
    "The quick brown fox jumps over the lazy dog.",
    "Rändelmutter M5, Edelstahl.",
    "Pièce de fixation en acier, épaisseur 4 mm.",
    "法兰盘，外径120毫米。",
    "Фланец с шестью отверстиями.",
    "",
    "   ",
    "hinge",
    "A knob with a knurled grip and a set screw.",
    "Bearing housing with a Ø47 H7 bore and four counterbored holes.",
    "Tabs\tand\nnewlines in a caption.",
    LONG_TEXT * 2,
]


def check_versions():
    import importlib
    wrong = []
    for name, version in PINNED.items():
        have = importlib.import_module(name).__version__.split("+")[0]
        if have != version:
            wrong.append(f"{name} {have} (want {version})")
    if wrong:
        sys.exit("make_text_fixtures.py needs the pinned versions: " + ", ".join(wrong) +
                 ". Install scripts/requirements.txt into the venv.")


def train_spm(corpus, folder):
    import sentencepiece as spm
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "corpus.txt")
        with open(text, "w", encoding="utf-8") as f:
            # Newlines inside texts would split them; the trainer sees lines.
            for line in corpus:
                f.write(" ".join(line.split()) + "\n")
        spm.SentencePieceTrainer.train(
            input=text, model_prefix=os.path.join(tmp, "spm"), vocab_size=500,
            model_type="unigram", character_coverage=0.995, pad_id=0, bos_id=1, eos_id=2,
            unk_id=3, pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]",
            unk_piece="[UNK]", num_threads=1, seed_sentencepiece_size=20000,
            minloglevel=2)
        shutil.copy(os.path.join(tmp, "spm.model"), os.path.join(folder, "spm.model"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False, "vocab_type": "spm",
                   "tokenizer_class": "DebertaV2Tokenizer"}, f, indent=2)


def train_wordpiece(corpus, folder):
    from tokenizers import BertWordPieceTokenizer
    os.makedirs(folder, exist_ok=True)
    tok = BertWordPieceTokenizer(lowercase=True, strip_accents=None, clean_text=True,
                                 handle_chinese_chars=True)
    tok.train_from_iterator(corpus, vocab_size=600, min_frequency=1, limit_alphabet=300,
                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        for token, _ in vocab:
            f.write(token + "\n")
    return len(vocab)


def slow_deberta_ids(model_file, corpus):
    """transformers' SentencePiece-based (slow) DebertaV2Tokenizer, which 4.x
    shipped and 5.x dropped: [CLS] + spm.encode(text) + [SEP], truncation
    keeping the first tokens. cadclip matches it (it is the tokenizer the
    models were trained with)."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model_file)
    cls_id, sep_id = sp.piece_to_id("[CLS]"), sp.piece_to_id("[SEP]")
    full = [[cls_id] + sp.encode(text) + [sep_id] for text in corpus]
    cut = [ids if len(ids) <= TRUNCATE_AT else ids[:TRUNCATE_AT - 1] + [sep_id] for ids in full]
    return {"full": full, "truncated": cut}


def spm_normalizes(text):
    """True when SentencePiece's nmt_nfkc normalisation changes `text` beyond
    whitespace: there transformers 5.x's DebertaV2Tokenizer (NFC only) gives
    other ids than the SentencePiece-based one."""
    import unicodedata
    return unicodedata.normalize("NFKC", text) != text or any(
        unicodedata.category(c) == "Cc" and not c.isspace() for c in text)


def tokenizer_ids(tokenizer, corpus):
    full = [tokenizer(text)["input_ids"] for text in corpus]
    cut = [tokenizer(text, truncation=True, max_length=TRUNCATE_AT)["input_ids"]
           for text in corpus]
    return {"full": full, "truncated": cut}


def save_model_folder(model, folder, dtype, extra_files=()):
    import torch
    os.makedirs(folder, exist_ok=True)
    model = model.to(dtype)
    model.save_pretrained(folder, safe_serialization=True)
    for src in extra_files:
        shutil.copy(src, folder)
    return model.to(torch.float32)


def reference_outputs(model, tokenizer, texts, folder, max_length):
    import torch
    from safetensors.torch import save_file
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length,
                      return_tensors="pt")
    model.eval()
    with torch.no_grad():
        base = getattr(model, model.base_model_prefix, model)
        hidden = base(input_ids=batch["input_ids"],
                      attention_mask=batch["attention_mask"]).last_hidden_state
    save_file({"input_ids": batch["input_ids"].contiguous(),
               "attention_mask": batch["attention_mask"].contiguous(),
               "last_hidden_state": hidden.contiguous()},
              os.path.join(folder, "reference.safetensors"))
    return batch["attention_mask"].sum(1).tolist()


def main():
    check_versions()
    import torch
    from safetensors.torch import save_file
    from transformers import (BertConfig, BertForMaskedLM, BertTokenizer, DebertaV2Config,
                              DebertaV2ForMaskedLM, DebertaV2Model, DebertaV2Tokenizer)
    torch.manual_seed(5)
    os.makedirs(OUT, exist_ok=True)

    corpus = make_corpus()
    with open(os.path.join(OUT, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump({"corpus": corpus, "minilm_sentences": MINILM_SENTENCES}, f,
                  ensure_ascii=False, indent=0)

    # Tokenizers.
    spm_tmp = tempfile.TemporaryDirectory()
    spm_dir = spm_tmp.name
    train_spm(corpus, spm_dir)
    deberta_tok = DebertaV2Tokenizer.from_pretrained(spm_dir)
    wp_tmp = tempfile.TemporaryDirectory()
    wp_dir = wp_tmp.name
    wp_size = train_wordpiece(corpus, wp_dir)
    vocab_txt = os.path.join(wp_dir, "vocab.txt")
    bert_uncased = BertTokenizer(vocab_txt, do_lower_case=True)
    bert_cased = BertTokenizer(vocab_txt, do_lower_case=False)
    minilm_tok = BertTokenizer.from_pretrained(MINILM)
    ids = {
        "truncate_at": TRUNCATE_AT,
        "deberta": slow_deberta_ids(os.path.join(spm_dir, "spm.model"), corpus),
        "deberta_transformers5": tokenizer_ids(deberta_tok, corpus),
        "spm_normalizes": [spm_normalizes(text) for text in corpus],
        "deberta_mask_id": deberta_tok.mask_token_id,
        "bert_uncased": tokenizer_ids(bert_uncased, corpus),
        "bert_cased": tokenizer_ids(bert_cased, corpus),
        "minilm": tokenizer_ids(minilm_tok, corpus),
    }
    with open(os.path.join(OUT, "tokenizer_ids.json"), "w") as f:
        json.dump(ids, f, separators=(",", ":"))

    spm_vocab = len(deberta_tok)  # spm pieces + [MASK]
    model_texts = [corpus[i] for i in (0, 2, 26, 60, 64, 70, 59)]

    # DeBERTa-v2: absolute positions plus unbucketed relative attention with
    # separate position projections, the conv layer and an embedding projection.
    v2_config = DebertaV2Config(
        vocab_size=spm_vocab, hidden_size=32, embedding_size=24, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=48, max_position_embeddings=96,
        relative_attention=True, max_relative_positions=12, position_biased_input=True,
        pos_att_type="p2c|c2p", type_vocab_size=0, conv_kernel_size=3, conv_act="gelu",
        hidden_act="gelu", layer_norm_eps=1e-7)
    v2 = DebertaV2Model(v2_config)
    v2_dir = os.path.join(OUT, "deberta_v2")
    v2 = save_model_folder(v2, v2_dir, torch.float32,
                           [os.path.join(spm_dir, "spm.model"),
                            os.path.join(spm_dir, "tokenizer_config.json")])
    v2_lengths = reference_outputs(v2, deberta_tok, model_texts, v2_dir, 64)

    # DeBERTa-v3 style: buckets (8, so mid 4: most pairs take the log branch),
    # shared keys, normalised relative embeddings; F16 weights with the MLM head.
    v3_config = DebertaV2Config(
        vocab_size=spm_vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=96, relative_attention=True,
        max_relative_positions=-1, position_buckets=8, norm_rel_ebd="layer_norm",
        share_att_key=True, pos_att_type="p2c|c2p", position_biased_input=False,
        type_vocab_size=0, hidden_act="gelu", layer_norm_eps=1e-7)
    v3 = DebertaV2ForMaskedLM(v3_config)
    v3_dir = os.path.join(OUT, "deberta_v3")
    v3 = save_model_folder(v3, v3_dir, torch.float16,
                           [os.path.join(spm_dir, "spm.model"),
                            os.path.join(spm_dir, "tokenizer_config.json")])
    v3_lengths = reference_outputs(v3, deberta_tok, model_texts, v3_dir, 64)

    # BERT: BF16 weights with the MLM head and the `bert.` prefix.
    bert_config = BertConfig(
        vocab_size=wp_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=48, max_position_embeddings=96, type_vocab_size=2,
        hidden_act="gelu", layer_norm_eps=1e-12)
    bert = BertForMaskedLM(bert_config)
    bert_dir = os.path.join(OUT, "bert")
    bert = save_model_folder(bert, bert_dir, torch.bfloat16, [vocab_txt])
    with open(os.path.join(bert_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "tokenizer_class": "BertTokenizer"}, f, indent=2)
    bert_lengths = reference_outputs(bert, bert_uncased, model_texts, bert_dir, 64)

    # The same vocabulary as a tokenizer.json-only folder, cased this time.
    json_dir = os.path.join(OUT, "bert_json")
    os.makedirs(json_dir, exist_ok=True)
    from transformers import BertTokenizerFast
    BertTokenizerFast(vocab_txt, do_lower_case=False).backend_tokenizer.save(
        os.path.join(json_dir, "tokenizer.json"))

    # The real MiniLM through sentence-transformers.
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(MINILM, device="cpu")
    emb = st.encode(MINILM_SENTENCES, normalize_embeddings=True, convert_to_tensor=True,
                    batch_size=8)
    save_file({"embeddings": emb.float().contiguous()},
              os.path.join(OUT, "minilm_expected.safetensors"),
              metadata={"model": "all-MiniLM-L6-v2",
                        "max_seq_length": str(st.max_seq_length)})

    print(f"corpus {len(corpus)} texts; spm vocab {spm_vocab}; wordpiece vocab {wp_size}")
    print(f"reference lengths v2 {v2_lengths} v3 {v3_lengths} bert {bert_lengths}")
    total = 0
    for root, _, files in os.walk(OUT):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    print(f"{OUT}: {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
