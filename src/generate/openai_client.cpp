// The chat-completions client of the `openai` generation backend (generate/openai_client.h):
// libcurl's multi interface, one easy handle per request in flight, retries scheduled on a clock.
#include "cuset/generate/openai_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <utility>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/signals.h"

namespace cuset {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

void curl_global_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            throw RuntimeFailure("generate: libcurl could not be initialised");
    });
}

size_t append_body(char* data, size_t size, size_t n, void* user) {
    static_cast<std::string*>(user)->append(data, size * n);
    return size * n;
}

// Text for one line of an error: newlines and tabs become spaces, at most kQuoteMaxBytes.
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return quote_bounded(s);
}

// The message of an error answer: {"error": {"message"}} (OpenAI, vLLM, llama.cpp),
// {"error": "..."}, {"message"} or {"detail"} (FastAPI), else the body itself.
std::string server_message(const std::string& body) {
    json j = json_depth_problem(body).empty() ? json::parse(body, nullptr, /*allow_exceptions=*/false) : json();
    if (j.is_object()) {
        auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
        if (j.contains("error")) {
            const json& e = j["error"];
            if (e.is_object() && e.contains("message")) return one_line(text(e["message"]));
            return one_line(text(e));
        }
        if (j.contains("message")) return one_line(text(j["message"]));
        if (j.contains("detail")) return one_line(text(j["detail"]));
    }
    return body.empty() ? "no message" : one_line(body);
}

// What to check for an HTTP status the server refused a request with.
const char* hint_for(long status) {
    if (status == 401 || status == 403) return "check generate.api_key_env and the key it names";
    if (status == 404) return "check generate.url (the API's base, e.g. http://HOST:PORT/v1) and generate.served_model";
    return "check generate.served_model and the generate.* sampling keys";
}

}  // namespace

ChatResponse chat_response_parse(const std::string& body, const std::string& where) {
    json j = json_depth_problem(body).empty() ? json::parse(body, nullptr, /*allow_exceptions=*/false) : json();
    if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array())
        throw RuntimeFailure(where + ": the answer is not a chat completion (no \"choices\" list): '" + one_line(body) +
                             "'");
    ChatResponse r;
    for (const json& c : j["choices"]) {
        ChatChoice ch;
        if (!c.is_object() || !c.contains("message") || !c["message"].is_object())
            throw RuntimeFailure(where + ": a choice of the answer has no \"message\": '" + one_line(c.dump()) + "'");
        const json& m = c["message"];
        if (m.contains("content") && m["content"].is_string()) ch.text = m["content"].get<std::string>();
        if (c.contains("finish_reason") && c["finish_reason"].is_string())
            ch.finish_reason = c["finish_reason"].get<std::string>();
        r.choices.push_back(std::move(ch));
    }
    if (j.contains("usage") && j["usage"].is_object()) {
        const json& u = j["usage"];
        if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer())
            r.prompt_tokens = u["prompt_tokens"].get<int64_t>();
        if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer())
            r.completion_tokens = u["completion_tokens"].get<int64_t>();
    }
    return r;
}

struct ChatClient::Impl {
    struct Job {
        size_t tag;
        std::string body;
        int64_t attempt = 0;  // attempts made
        Clock::time_point not_before{};
    };
    struct Transfer {
        Job job;
        CURL* easy = nullptr;
        std::string answer;
        char error[CURL_ERROR_SIZE] = {0};
        Clock::time_point start;
    };
    CURLM* multi = nullptr;
    curl_slist* headers = nullptr;
    std::deque<Job> queue;
    std::vector<std::unique_ptr<Transfer>> active;

    ~Impl() {
        for (auto& t : active) {
            curl_multi_remove_handle(multi, t->easy);
            curl_easy_cleanup(t->easy);
        }
        if (multi) curl_multi_cleanup(multi);
        if (headers) curl_slist_free_all(headers);
    }
};

ChatClient::ChatClient(ServerSettings settings) : settings_(std::move(settings)), impl_(std::make_unique<Impl>()) {
    curl_global_once();
    std::string base = settings_.url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    endpoint_ = base + "/chat/completions";
    impl_->headers = curl_slist_append(impl_->headers, "Content-Type: application/json");
    impl_->headers = curl_slist_append(impl_->headers, "Accept: application/json");
    impl_->headers = curl_slist_append(impl_->headers, "Expect:");  // no 100-continue round trip for long bodies
    if (!settings_.api_key_env.empty()) {
        const char* key = std::getenv(settings_.api_key_env.c_str());
        if (!key || !*key)
            throw UsageError("generate: key 'generate.api_key_env' names the environment variable '" +
                             settings_.api_key_env + "', which is not set (export it with the API key, or set "
                             "generate.api_key_env: \"\" for a server without one)");
        impl_->headers = curl_slist_append(impl_->headers, (std::string("Authorization: Bearer ") + key).c_str());
    }
    impl_->multi = curl_multi_init();
    if (!impl_->multi || !impl_->headers) throw RuntimeFailure("generate: libcurl could not make a request handle");
}

ChatClient::~ChatClient() = default;

void ChatClient::add(size_t tag, std::string body) { impl_->queue.push_back({tag, std::move(body)}); }

void ChatClient::run(const std::function<void(size_t, const ChatResponse&)>& on_done) {
    Impl& m = *impl_;
    const int64_t attempts = 1 + std::max<int64_t>(0, settings_.retries);
    const auto timeout_ms = static_cast<long>(std::max(1.0, settings_.timeout_s * 1000.0));
    auto start = [&](Impl::Job job) {
        auto t = std::make_unique<Impl::Transfer>();
        t->job = std::move(job);
        t->easy = curl_easy_init();
        if (!t->easy) throw RuntimeFailure("generate: libcurl could not make a request handle");
        CURL* e = t->easy;
        curl_easy_setopt(e, CURLOPT_URL, endpoint_.c_str());
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, m.headers);
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->job.body.data());
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->job.body.size()));
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, append_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &t->answer);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 30000L));
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
        t->start = Clock::now();
        ++t->job.attempt;
        curl_multi_add_handle(m.multi, e);
        m.active.push_back(std::move(t));
    };
    auto retry_or_throw = [&](Impl::Job job, const std::string& what) {
        if (job.attempt >= attempts)
            throw RuntimeFailure("generate: POST " + endpoint_ + " failed after " + std::to_string(job.attempt) +
                                 " attempt(s): " + what + " (is the server up at generate.url?)");
        const double wait_s = std::min(30.0, 0.5 * std::pow(2.0, static_cast<double>(job.attempt - 1)));
        log_warn("generate: POST %s: %s; retrying in %.1f s (attempt %lld of %lld)", endpoint_.c_str(), what.c_str(),
                 wait_s, static_cast<long long>(job.attempt + 1), static_cast<long long>(attempts));
        job.not_before = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000));
        m.queue.push_back(std::move(job));
    };
    const size_t in_flight = static_cast<size_t>(std::max<int64_t>(1, settings_.concurrency));
    while (!m.queue.empty() || !m.active.empty()) {
        if (signals_stop_requested()) throw StoppedBySignal("generate: stopped by a signal");
        // Start what may start: queued jobs whose backoff has passed, up to the concurrency.
        const Clock::time_point now = Clock::now();
        for (size_t i = 0; i < m.queue.size() && m.active.size() < in_flight;) {
            if (m.queue[i].not_before <= now) {
                Impl::Job job = std::move(m.queue[i]);
                m.queue.erase(m.queue.begin() + static_cast<std::ptrdiff_t>(i));
                start(std::move(job));
            } else {
                ++i;
            }
        }
        int running = 0;
        if (curl_multi_perform(m.multi, &running) != CURLM_OK) throw RuntimeFailure("generate: libcurl failed");
        if (!m.active.empty()) curl_multi_poll(m.multi, nullptr, 0, 100, nullptr);
        else if (!m.queue.empty()) curl_multi_poll(m.multi, nullptr, 0, 50, nullptr);  // waiting out a backoff
        curl_multi_perform(m.multi, &running);
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(m.multi, &left)) {
            if (msg->msg != CURLMSG_DONE) continue;
            auto it = std::find_if(m.active.begin(), m.active.end(),
                                   [&](const std::unique_ptr<Impl::Transfer>& t) { return t->easy == msg->easy_handle; });
            if (it == m.active.end()) continue;
            std::unique_ptr<Impl::Transfer> t = std::move(*it);
            m.active.erase(it);
            const CURLcode code = msg->data.result;
            long status = 0;
            curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
            curl_multi_remove_handle(m.multi, t->easy);
            curl_easy_cleanup(t->easy);
            t->easy = nullptr;
            const double seconds = std::chrono::duration<double>(Clock::now() - t->start).count();
            if (code != CURLE_OK) {
                retry_or_throw(std::move(t->job), one_line(t->error[0] ? t->error : curl_easy_strerror(code)));
                continue;
            }
            if (status == 429 || status >= 500) {
                retry_or_throw(std::move(t->job), "HTTP " + std::to_string(status) + ": " + server_message(t->answer));
                continue;
            }
            if (status < 200 || status >= 300)
                throw RuntimeFailure("generate: POST " + endpoint_ + " answered HTTP " + std::to_string(status) + ": " +
                                     server_message(t->answer) + " (" + hint_for(status) + ")");
            ChatResponse r = chat_response_parse(t->answer, "generate: POST " + endpoint_);
            r.seconds = seconds;
            on_done(t->job.tag, r);
        }
    }
}

}  // namespace cuset
