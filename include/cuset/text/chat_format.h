// Chat formats: turn a conversation into token ids with, for every token, its role, whether it is
// a training target, and its byte span inside the message it came from. The whole rendered text
// is tokenized at once (as transformers' apply_chat_template does), so ids equal the reference.
// Formats: template (the model's own Jinja chat template, rendered as transformers renders it),
// chatml (Qwen2.5), qwen3 (ChatML with Qwen3's think block), deepseek-coder, seed-coder, plain,
// custom (data.template.*), auto (the folder's template when it has one).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/text/tokenizer.h"

namespace cuset {

enum class Role : uint8_t { kTemplate = 0, kSystem = 1, kPrompt = 2, kResponse = 3 };
const char* role_name(Role r);  // "template" | "system" | "prompt" | "response"

struct Message {
    std::string role;     // system | user | assistant ("text": one raw-text message, see below)
    std::string content;  // the text (content given as a list of text parts: theirs, concatenated)
    // Content given as a list of text parts ([{"type": "text", "text": ...}, ...], the form vision
    // models' templates read): the byte length of each part's text in `content`, in order; empty
    // for a string. Only the `template` format renders parts (as that list).
    std::vector<size_t> parts{};
};
struct Conversation {
    std::string id;  // names the sample in errors
    std::vector<Message> messages;
    // What apply_chat_template passes as `tools` (a list of JSON schemas) and `documents` (a list
    // of dicts), keys in their order: the template sees them as lists and dicts; null = not given
    // (the template sees None). Only the `template` format renders them.
    nlohmann::ordered_json tools{}, documents{};
};

struct FormattedSample {
    std::vector<int32_t> ids;                        // [T]
    std::vector<Role> roles;                         // [T]
    std::vector<uint8_t> trainable;                  // [T] 1 = training target (response tokens and the end-of-turn token)
    std::vector<int32_t> message;                    // [T] index of the message whose content the token covers; -1 = template
    std::vector<std::pair<int32_t, int32_t>> spans;  // [T] byte span inside messages[message[t]].content; {-1,-1} = none
};

// The turns of the `custom` format (a user's own template); `{content}` is replaced by the text.
struct CustomTemplate {
    std::string prefix;                      // once at the start (e.g. a BOS piece)
    std::string system = "{content}\n";
    std::string user = "User: {content}\n";
    std::string assistant = "Assistant: {content}";
    std::string end_of_turn;                 // appended after the response, trainable
};

struct ChatFormatOptions {
    std::string format = "auto";  // auto | template | chatml | qwen3 | deepseek-coder | seed-coder | plain | custom
    std::string system_prompt;    // used when the conversation has no system message ("" = the format's own default)
    CustomTemplate templ;         // the turns of `custom`
    // `template`: a file holding the Jinja template (a .jinja file, or a JSON file with a
    // "chat_template" key such as tokenizer_config.json); "" = the tokenizer folder's own.
    std::string chat_template;
    // `template`: extra variables the template sees (apply_chat_template's **kwargs, e.g.
    // {"enable_thinking": false}); they override the special tokens of the same name.
    nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
};

namespace jinja {
class Template;
}
struct ChatFormatRow;  // one format's row of the table in chat_format.cpp

// The formats data.chat_format names (besides auto), in the table's order: the model's own
// `template`, then the hand-written ones; chat_format_hand_written() lists the latter.
std::vector<std::string> chat_format_names();
std::vector<std::string> chat_format_hand_written();

// Token roles. A token whose bytes overlap an assistant message's content is kResponse (its span
// is the overlap, so a token merging a template newline with the content's first byte counts as
// response); one overlapping a user or system message is kPrompt / kSystem; everything else is
// kTemplate. Trainable: every kResponse token plus the end-of-turn sequence after each assistant
// message (the template text from the end of the content through the end-of-turn token, e.g.
// "\n<|EOT|>" for deepseek-coder, "<|im_end|>" for ChatML). Qwen3's empty
// "<think>\n\n</think>\n\n" block before an answer is template and not trainable (it is part of
// the prompt at inference with thinking off); a non-empty reasoning block is trainable.
// `template` renders with the Jinja template, every message's content carried through as
// provenance, so content bytes are located exactly. Its trainable mask comes from the template's
// {% generation %} markers where it has them (transformers' return_assistant_tokens_mask), else
// from the spans of each assistant message: from the end of the generation prompt (the
// conversation before the message rendered with add_generation_prompt, when the full rendering
// starts with it) or the content's first byte, through its last byte and the first special token
// after it (its end of turn). A template that writes no special token after the final answer (GLM-4,
// ChatGLM3, Falcon, ...) gets the special token it writes next when the conversation goes on (GLM's
// <|user|>), else the tokenizer's EOS, appended after the rendering as one trainable token (the
// model must learn to stop); an earlier answer without one trains its content. A message whose
// content is a list of text parts (Message::parts) reaches the template as that list, each text
// located as a string content is; a hand-written format refuses it. A template that writes an
// assistant's string content nowhere but writes it given as parts (vision models' templates, which
// loop over `message['content']`) gets, in format() and generation_prompt(), every string content
// as the one-part list [{"type": "text", "text": content}], what such a model's processor is given;
// the constructor says so in the log. A sample whose assistant content the template does not
// render as it is, or whose final answer gets no end token that way, is refused (InputError naming
// the sample).
// A conversation made of one message with role "text" is raw text: no template, BOS when the
// tokenizer adds one, every content token trainable, then EOS (trainable) when the tokenizer has one.
class ChatFormatter {
public:
    // Resolves `auto`: `template` when the folder (or opts.chat_template) has a chat template,
    // else a UsageError asking for data.chat_format. `template` parses the template: one Jinja2
    // would not compile (jinja.h) is an InputError naming the file, the line and the reason, as is
    // a chat_template entry that is neither a string nor a list of named templates with a default.
    ChatFormatter(const Tokenizer& tok, ChatFormatOptions opts, const std::string& tokenizer_dir);

    // InputError naming c.id: unknown role, no assistant message, invalid UTF-8, empty trainable set,
    // tools or documents for a hand-written format (which has no place for them).
    FormattedSample format(const Conversation& c) const;

    const std::string& name() const { return name_; }  // resolved format name
    // `template`: the file the template came from; "" otherwise.
    const std::string& template_source() const { return template_source_; }
    // Where the trainable mask comes from: "markers" ({% generation %}), "spans" (the assistant
    // messages' spans in the rendering) for `template`; "format" for the hand-written formats.
    std::string mask_source() const;

    // Generation: the token ids [T] of `c` (ending with a user message, or one raw-text message)
    // followed by the assistant header the model answers after, as apply_chat_template(...,
    // add_generation_prompt=True) renders it: exactly the text format() puts before an
    // assistant's content, so Qwen3 gets its empty think block ("<think>\n\n</think>\n\n", thinking
    // off) unless `thinking`. Raw text: its tokens (with the BOS the tokenizer adds), no EOS.
    // InputError naming c.id: no messages, last message not from the user, invalid UTF-8.
    std::vector<int32_t> generation_prompt(const Conversation& c, bool thinking = false) const;
    // The text that ends an assistant turn ("<|im_end|>", "<|EOT|>", the EOS token's text, the
    // custom end_of_turn); "" when the format has none.
    std::string end_of_turn() const;

    // The text of `c` as transformers' apply_chat_template(c, tokenize=False,
    // add_generation_prompt=...) renders it with this format: the template's output for
    // `template`, the contents as given (strings stay strings where format() renders them as
    // parts); for a hand-written format the text format() tokenizes (with
    // add_generation_prompt: what generation_prompt() tokenizes), a token put in by id written as
    // its text. add_generation_prompt wants a conversation that ends with a user message.
    // InputError naming c.id as format() and generation_prompt() have them.
    std::string render_text(const Conversation& c, bool add_generation_prompt) const;

    // The rendered text of `c` with its segments (for tests and `cuset-train tokenize`), and
    // format() that also returns each token's byte span in that text.
    struct Rendered;
    Rendered render(const Conversation& c) const;
    FormattedSample format(const Conversation& c, Rendered* rendered,
                           std::vector<std::pair<uint32_t, uint32_t>>* offsets) const;

private:
    void template_init(const std::string& text, const std::string& source, const std::string& tokenizer_dir);
    Rendered render_template(const Conversation& c) const;
    // `as_given`: string contents stay strings even where string_as_parts_ (render_text).
    std::string render_template_text(const Conversation& c, bool add_generation_prompt, bool thinking, bool as_given) const;
    int32_t next_turn_token(const Conversation& c) const;

    const Tokenizer& tok_;
    ChatFormatOptions opts_;
    std::string name_;
    const ChatFormatRow* row_ = nullptr;  // the resolved format's row
    int32_t add_bos_ = -1;  // BOS the tokenizer's post-processor would add (plain, custom, raw text)
    // `template`
    std::shared_ptr<const jinja::Template> tmpl_;
    std::string template_source_;
    nlohmann::ordered_json template_vars_;   // special tokens and template_kwargs
    std::vector<std::string> special_texts_; // the tokenizer's special tokens, longest first
    std::vector<int32_t> special_ids_;       // their ids, in the same order
    std::string end_of_turn_;
    // The template writes an assistant's content only when it is a list of parts (vision models'
    // templates): format() and generation_prompt() render every string content as one text part.
    bool string_as_parts_ = false;
};

struct ChatFormatter::Rendered {
    // One piece of the rendered text: template text, (part of) a message's content, or a token
    // put in by id (BOS/EOS for plain, custom and raw text; begin == end at its position).
    struct Segment {
        size_t begin = 0, end = 0;  // byte range in `text`
        int32_t message = -1;       // message index; -1 = template text
        size_t content_begin = 0;   // byte offset of `begin` inside the message content
        bool trainable = false;     // template text that is a training target (end of turn)
        int32_t token_id = -1;      // >= 0: a token inserted by id
    };
    std::string text;
    std::vector<Segment> segments;
    // `template`: a token is trainable when it overlaps a trainable segment (content or
    // template), as the marker and span masks decide; otherwise the hand-written rule above.
    bool trainable_by_segment = false;
};

// Recognises the chat format from a tokenizer folder's tokenizer_config.json chat_template (or
// chat_template.jinja): returns "" when there is none or it is not one cuset knows.
std::string chat_format_detect(const std::string& tokenizer_dir);

// The chat template of a tokenizer folder, as transformers loads it: chat_template.jinja, else
// chat_template.json's "chat_template", else tokenizer_config.json's "chat_template" (a string, or
// the entry named "default" of a list). `source` gets the file it came from. "" when there is none;
// InputError naming the file when its chat_template is something else.
std::string chat_template_find(const std::string& tokenizer_dir, std::string* source);
// The template in a file named by data.chat_template: a JSON file's "chat_template" (as above),
// else the file's text. UsageError when it is not a file, InputError when the JSON has none.
std::string chat_template_read(const std::string& path);

// UTF-8: validate or repair text from data files (config data.invalid_utf8: error | replace).
// Returns the text unchanged when valid; replaces each maximal invalid subsequence with U+FFFD when
// `replace` (as Python's errors="replace"); otherwise throws InputError naming `context` and the
// byte offset.
std::string utf8_sanitize(std::string_view text, bool replace, const std::string& context);

}  // namespace cuset
