/*@prompt
Write a small N-body simulation on the GPU (N = 2048, G = 1, softening eps^2 = 0.01): integrate 20 steps of kick-drift-kick leapfrog with dt = 0.001 using separate kernels for the force computation and for the kick/drift updates. Check the final state against a CPU simulation and that energy is approximately conserved.
@explanation
Leapfrog (kick-drift-kick) is symplectic and keeps the energy error bounded: each step does `v += a dt/2`, `x += v dt`, recomputes `a` at the new positions, and `v += a dt/2` again. On the GPU this is a sequence of launches on one stream: `compute_acc` (all pairs, positions as float4 with mass in w), `kick` (half-step velocity update) and `drift` (position update); stream order guarantees that each kernel sees the previous one's results, so no explicit synchronisation is needed inside the loop. Keeping the mass in the position's w component means the drift kernel must only touch x, y and z. The CPU runs the same scheme in double. After 20 steps positions and velocities must agree to 1e-4, and the relative change of total energy (kinetic plus softened potential, computed on the host) must stay below 1e-3.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

__global__ void compute_acc(const float4* __restrict__ pos, float3* __restrict__ acc, int n, float eps2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i];
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
        float f = q.w * inv * inv * inv;
        ax += f * dx; ay += f * dy; az += f * dz;
    }
    acc[i] = make_float3(ax, ay, az);
}

__global__ void kick(float3* vel, const float3* acc, int n, float half_dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { vel[i].x += acc[i].x * half_dt; vel[i].y += acc[i].y * half_dt; vel[i].z += acc[i].z * half_dt; }
}

__global__ void drift(float4* pos, const float3* vel, int n, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { pos[i].x += vel[i].x * dt; pos[i].y += vel[i].y * dt; pos[i].z += vel[i].z * dt; }  // w = mass
}

struct State { std::vector<double> x, v, m; };

static void cpu_acc(const State& s, std::vector<double>& a, int n, double eps2)
{
    for (int i = 0; i < n; ++i) {
        double acc[3] = {0, 0, 0};
        for (int j = 0; j < n; ++j) {
            double d[3], d2 = eps2;
            for (int c = 0; c < 3; ++c) { d[c] = s.x[3 * j + c] - s.x[3 * i + c]; d2 += d[c] * d[c]; }
            double f = s.m[j] / (d2 * std::sqrt(d2));
            for (int c = 0; c < 3; ++c) acc[c] += f * d[c];
        }
        for (int c = 0; c < 3; ++c) a[3 * i + c] = acc[c];
    }
}

static double energy(const State& s, int n, double eps2)
{
    double e = 0.0;
    for (int i = 0; i < n; ++i) {
        e += 0.5 * s.m[i] * (s.v[3 * i] * s.v[3 * i] + s.v[3 * i + 1] * s.v[3 * i + 1] + s.v[3 * i + 2] * s.v[3 * i + 2]);
        for (int j = i + 1; j < n; ++j) {
            double d2 = eps2;
            for (int c = 0; c < 3; ++c) d2 += (s.x[3 * j + c] - s.x[3 * i + c]) * (s.x[3 * j + c] - s.x[3 * i + c]);
            e -= s.m[i] * s.m[j] / std::sqrt(d2);
        }
    }
    return e;
}

int main()
{
    const int n = 2048, steps = 20, threads = 128, blocks = (n + threads - 1) / threads;
    const float dt = 0.001f, eps2 = 0.01f;
    std::vector<float4> pos(n);
    std::vector<float3> vel(n);
    State s{std::vector<double>(3 * n), std::vector<double>(3 * n), std::vector<double>(n)};
    for (int i = 0; i < n; ++i) {
        float t = 6.2831853f * i / n, r = 0.5f + 0.5f * (float)((i * 37) % 101) / 101.0f;
        pos[i] = make_float4(r * std::cos(t), r * std::sin(t), 0.05f * std::sin(5 * t), 1.0f / n);
        vel[i] = make_float3(-0.3f * std::sin(t), 0.3f * std::cos(t), 0.0f);
        const float px[3] = {pos[i].x, pos[i].y, pos[i].z}, pv[3] = {vel[i].x, vel[i].y, vel[i].z};
        for (int c = 0; c < 3; ++c) { s.x[3 * i + c] = px[c]; s.v[3 * i + c] = pv[c]; }
        s.m[i] = pos[i].w;
    }
    const double e0 = energy(s, n, eps2);

    float4* d_pos;
    float3 *d_vel, *d_acc;
    CUDA_CHECK(cudaMalloc(&d_pos, n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&d_vel, n * sizeof(float3)));
    CUDA_CHECK(cudaMalloc(&d_acc, n * sizeof(float3)));
    CUDA_CHECK(cudaMemcpy(d_pos, pos.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_vel, vel.data(), n * sizeof(float3), cudaMemcpyHostToDevice));
    compute_acc<<<blocks, threads>>>(d_pos, d_acc, n, eps2);
    for (int step = 0; step < steps; ++step) {
        kick<<<blocks, threads>>>(d_vel, d_acc, n, 0.5f * dt);
        drift<<<blocks, threads>>>(d_pos, d_vel, n, dt);
        compute_acc<<<blocks, threads>>>(d_pos, d_acc, n, eps2);
        kick<<<blocks, threads>>>(d_vel, d_acc, n, 0.5f * dt);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(pos.data(), d_pos, n * sizeof(float4), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(vel.data(), d_vel, n * sizeof(float3), cudaMemcpyDeviceToHost));
    cudaFree(d_pos); cudaFree(d_vel); cudaFree(d_acc);

    std::vector<double> a(3 * n);
    cpu_acc(s, a, n, eps2);
    for (int step = 0; step < steps; ++step) {
        for (int k = 0; k < 3 * n; ++k) s.v[k] += a[k] * 0.5 * dt;
        for (int k = 0; k < 3 * n; ++k) s.x[k] += s.v[k] * dt;
        cpu_acc(s, a, n, eps2);
        for (int k = 0; k < 3 * n; ++k) s.v[k] += a[k] * 0.5 * dt;
    }
    double max_dx = 0.0, max_dv = 0.0;
    for (int i = 0; i < n; ++i) {
        const float px[3] = {pos[i].x, pos[i].y, pos[i].z}, pv[3] = {vel[i].x, vel[i].y, vel[i].z};
        for (int c = 0; c < 3; ++c) {
            double d = std::fabs(px[c] - s.x[3 * i + c]), e = std::fabs(pv[c] - s.v[3 * i + c]);
            if (std::isnan(d) || d > max_dx) max_dx = d;  // a NaN sticks
            if (std::isnan(e) || e > max_dv) max_dv = e;  // a NaN sticks
        }
    }
    State g{std::vector<double>(3 * n), std::vector<double>(3 * n), s.m};
    for (int i = 0; i < n; ++i) {
        const float px[3] = {pos[i].x, pos[i].y, pos[i].z}, pv[3] = {vel[i].x, vel[i].y, vel[i].z};
        for (int c = 0; c < 3; ++c) { g.x[3 * i + c] = px[c]; g.v[3 * i + c] = pv[c]; }
    }
    const double drift_e = std::fabs(energy(g, n, eps2) - e0) / std::fabs(e0);
    printf("max position / velocity difference %.2e / %.2e, relative energy change %.2e\n", max_dx, max_dv, drift_e);
    if (!(max_dx <= 1e-4) || !(max_dv <= 1e-4) || !(drift_e <= 1e-3)) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
