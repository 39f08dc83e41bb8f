// `cuset-train tokenize --tokenizer PATH [--chat-format F] [--format json] FILE|-`: the ids,
// pieces and byte offsets of a text or of JSONL conversations (the work is in chat_format.cpp).
#include <iostream>
#include <memory>

#include "commands.h"
#include "cuset/core/log.h"
#include "cuset/text/chat_format.h"

namespace cuset::cli {

Command add_tokenize_command(CLI::App& root) {
    auto o = std::make_shared<TokenizeRequest>();
    CLI::App* sub = root.add_subcommand(
        "tokenize", "print the ids, pieces and byte offsets of a text (or, with --chat-format, of JSONL "
                    "conversations with roles and trainable flags) to check tokenization against other tools");
    sub->add_option("input", o->input, "text file, or JSONL with --chat-format; - reads stdin")->required();
    sub->add_option("--tokenizer", o->tokenizer, "tokenizer folder or file (tokenizer.json / tokenizer.model)")->required();
    sub->add_option("--chat-format", o->chat_format,
                    "format the input lines as conversations: auto, chatml, qwen3, deepseek-coder, seed-coder, plain");
    sub->add_option("--system-prompt", o->system_prompt, "system prompt for conversations without one");
    sub->add_option("--format", o->output, "text or json")->check(CLI::IsMember({"text", "json"}));
    sub->add_flag("--add-special-tokens", o->add_special_tokens, "apply the post-processor (e.g. BOS) to raw text");
    return {sub, [o] {
                log_init("warn");
                return tokenize_command(*o, std::cout);
            }};
}

}  // namespace cuset::cli
