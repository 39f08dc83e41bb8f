// The SentencePiece backend: tokenizer.model through libsentencepiece, with the byte spans of its
// pieces and the BOS/EOS that tokenizer_config.json asks for.
#include "sentencepiece.h"

#include <fstream>

#include <sentencepiece_processor.h>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/log.h"
#include "unicode.h"

namespace cuset {

using nlohmann::json;

// ---------------------------------------------------------------- SentencePiece backend

namespace {

class SentencePieceTokenizer final : public Tokenizer {
public:
    SentencePieceTokenizer(const std::string& path, const json& config) {
        require_regular_file(path, "SentencePiece model");  // before the open: a FIFO would block it
        if (!std::ifstream(path, std::ios::binary)) throw InputError(path + ": cannot read the SentencePiece model file");
        // The library's status only names its own source lines ("INTERNAL: ...processor.cc(1102)
        // [model_proto->ParseFromArray(...)]"), nothing a user can act on.
        if (!sp_.Load(path).ok())
            throw InputError(path + ": not a SentencePiece model (it does not parse as one; use the model's own "
                                    "tokenizer.model, or its tokenizer.json)");
        add_bos_ = config.value("add_bos_token", true) && sp_.bos_id() >= 0;
        add_eos_ = config.value("add_eos_token", false) && sp_.eos_id() >= 0;
        source_ = path;
        backend_ = "sentencepiece";
        bos_id_ = sp_.bos_id();
        eos_id_ = sp_.eos_id();
        pad_id_ = sp_.pad_id();
    }

    Encoding encode(std::string_view text, bool add_special_tokens) const override {
        if (int64_t bad = utf8_first_invalid(text); bad >= 0)
            throw InputError(strprintf("invalid UTF-8 at byte %lld of the text to tokenize", static_cast<long long>(bad)));
        Encoding e;
        if (add_special_tokens && add_bos_) {
            e.ids.push_back(sp_.bos_id());
            e.offsets.push_back({0, 0});
        }
        sentencepiece::ImmutableSentencePieceText spt =
            sp_.EncodeAsImmutableProto(absl::string_view(text.data(), text.size()));
        for (const auto& p : spt.pieces()) {
            e.ids.push_back(static_cast<int32_t>(p.id()));
            e.offsets.push_back({p.begin(), p.end()});
        }
        if (add_special_tokens && add_eos_) {
            e.ids.push_back(sp_.eos_id());
            e.offsets.push_back({0, 0});
        }
        return e;
    }

    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
        std::vector<int> v;
        v.reserve(ids.size());
        const int n = sp_.GetPieceSize();
        for (int32_t id : ids) {
            if (id < 0 || id >= n) continue;
            if (skip_special_tokens && is_special(id)) continue;
            v.push_back(id);
        }
        std::string out;
        sp_.Decode(v, &out);
        return out;
    }

    int32_t token_to_id(std::string_view token) const override {
        int id = sp_.PieceToId(absl::string_view(token.data(), token.size()));
        // PieceToId answers unk for unknown pieces; only the unk piece itself maps to unk.
        if (id == sp_.unk_id() && sp_.IdToPiece(id) != token) return -1;
        return id;
    }
    std::string id_to_token(int32_t id) const override {
        if (id < 0 || id >= sp_.GetPieceSize()) return "";
        return sp_.IdToPiece(id);
    }
    int64_t vocab_size() const override { return sp_.GetPieceSize(); }
    bool is_special(int32_t id) const override {
        if (id < 0 || id >= sp_.GetPieceSize()) return false;
        return sp_.IsControl(id) || sp_.IsUnknown(id);
    }

private:
    sentencepiece::SentencePieceProcessor sp_;
    bool add_bos_ = true;
    bool add_eos_ = false;
};

}  // namespace

namespace detail {
std::unique_ptr<Tokenizer> make_spm_tokenizer(const std::string& model_path, const json& config) {
    return std::make_unique<SentencePieceTokenizer>(model_path, config);
}
}  // namespace detail

}  // namespace cuset
