// The `openai` generation backend: a client of the OpenAI-compatible chat-completions API
// (POST <url>/chat/completions) that vLLM, SGLang and llama.cpp's server expose, on libcurl's
// multi interface: many requests in flight, a timeout per request, retries with exponential
// backoff on connection errors, HTTP 429 and 5xx. The API key is read from the environment
// variable generate.api_key_env names and is never written to a log or an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cuset {

// generate.url, generate.served_model, generate.api_key_env, generate.concurrency,
// generate.timeout_s, generate.retries.
struct ServerSettings {
    std::string url;          // the API's base, e.g. http://127.0.0.1:8000/v1 (".../chat/completions" is appended)
    std::string model;        // the request's "model": the name the server knows the model by
    std::string api_key_env;  // environment variable holding the key ("" = no Authorization header)
    int64_t concurrency = 8;  // requests in flight
    double timeout_s = 600;   // per request (connecting, generating, reading the answer)
    int64_t retries = 3;      // further attempts after a connection error, HTTP 429 or 5xx
};

// One choice of a chat-completions answer.
struct ChatChoice {
    std::string text;           // choices[i].message.content ("" when null)
    std::string finish_reason;  // as the server wrote it ("stop", "length", ...)
};

// A parsed answer: its choices in order, usage's token counts (-1 when absent), the wall time.
struct ChatResponse {
    std::vector<ChatChoice> choices;
    int64_t prompt_tokens = -1;
    int64_t completion_tokens = -1;
    double seconds = 0;
};

// Parses a chat-completions answer's body; throws RuntimeFailure naming `where` when it is not one.
ChatResponse chat_response_parse(const std::string& body, const std::string& where);

// Requests in flight against one server. add() queues a JSON request body under a caller's tag;
// run() posts them (at most `concurrency` at once) until every queued body, including those added
// by `on_done` while it runs, is answered, calling on_done(tag, answer) on this thread as each
// completes. A request that fails after its retries, or that the server refuses (another 4xx),
// throws RuntimeFailure (exit 4) naming the URL and the server's message; a stop signal
// (signals_stop_requested) throws StoppedBySignal within a fraction of a second.
class ChatClient {
public:
    // Throws UsageError when api_key_env names a variable that is not set.
    explicit ChatClient(ServerSettings settings);
    ~ChatClient();
    ChatClient(const ChatClient&) = delete;
    ChatClient& operator=(const ChatClient&) = delete;

    const std::string& endpoint() const { return endpoint_; }  // <url>/chat/completions
    void add(size_t tag, std::string body);
    void run(const std::function<void(size_t tag, const ChatResponse& answer)>& on_done);

private:
    struct Impl;
    ServerSettings settings_;
    std::string endpoint_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cuset
