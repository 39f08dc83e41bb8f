// What the CPU memory benchmarks (bench_objective, bench_model_memory) measure with: a wrapper
// around LibTorch's CPU allocator that counts the bytes of live tensors and their peak.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>

#include <c10/core/Allocator.h>

namespace bench {

// Counts the bytes of every CPU tensor allocation; peak since the last reset.
class CountingAllocator final : public c10::Allocator {
public:
    explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

    c10::DataPtr allocate(size_t n) override {
        c10::DataPtr p = inner_->allocate(n);
        void* data = p.get();
        add(static_cast<int64_t>(n));
        auto* ctx = new Block{std::move(p), static_cast<int64_t>(n), this};
        return {data, ctx, &CountingAllocator::release, c10::Device(c10::DeviceType::CPU)};
    }
    void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
    int64_t current() const { return current_.load(); }
    int64_t peak() const { return peak_.load(); }
    void reset_peak() { peak_.store(current_.load()); }

private:
    struct Block {
        c10::DataPtr inner;  // frees the memory when the block is deleted
        int64_t n;
        CountingAllocator* self;
    };
    static void release(void* ctx) {
        auto* b = static_cast<Block*>(ctx);
        b->self->current_ -= b->n;
        delete b;
    }
    void add(int64_t n) {
        const int64_t now = current_ += n;
        int64_t p = peak_.load();
        while (now > p && !peak_.compare_exchange_weak(p, now)) {
        }
    }
    c10::Allocator* inner_;
    std::atomic<int64_t> current_{0}, peak_{0};
};

}  // namespace bench
