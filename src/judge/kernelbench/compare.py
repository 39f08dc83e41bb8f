# The check stage of a KernelBench task in cuset's judge: a fresh folder holding the reference
# outputs (data/refs.json, data/ref_t<k>.bin) and a copy of the candidate's (data/outputs.json,
# data/output_t<k>.bin), nothing else. KernelBench's correctness rule for every trial: the same
# number of outputs, each of the reference's shape and dtype, torch.allclose(reference, output,
# atol=KB["tolerance"], rtol=KB["tolerance"]). Before it, cuset's anti-hacking rules in this
# order, each a status of its own, printed as "cuset-kernelbench-status: <status>" after one line
# of detail and before the verdict F:
#   not-kernel-output forward returned a tensor subclass (values computed when read) or a tensor in
#                     host memory, or copied between device and host memory (the run's report);
#                     host code that touched device memory ends the run itself, with a
#                     "cuset-device-memory:" line the judge reads as this status
#   input-mutated     forward changed an input tensor (as the candidate's run saw it)
#   no-kernel         forward launched no kernel of its own (the emulator's count)
#   side-stream       forward launched a kernel on a stream it created (not a default stream), or
#                     the candidate made a torch.cuda.Stream: work a timer on the default stream
#                     would not wait for (the emulator's count, the harness's)
#   timer-patch       the candidate replaced a function a timer reads (time.perf_counter,
#                     torch.cuda.Event.elapsed_time, torch.cuda.synchronize, ...)
#   fallback          forward still returned a result when every call into its extensions failed
#   torch-op          forward ran one of torch's computing operators (anything but making, filling,
#                     copying and re-viewing tensors): the work is torch's, not the kernels'
#   constant-output   an output whose elements are all equal where the reference's are not
#   mismatch          a missing, extra or differently shaped output, or values out of tolerance
#   input-specific    the values are right on KernelBench's trials but not on cuset's extra trials
#                     (other seeds, inputs of both signs: refs.json marks them "extra"; one whose
#                     reference output is not finite is marked "used": false and skipped)
# The last line is the verdict: T (every trial passes) or F.
import json

import torch


def verdict(status, detail):
    print(detail)
    print("cuset-kernelbench-status: " + status)
    print("F")
    raise SystemExit(0)


def constant(t):
    if t.numel() < 2:
        return False
    flat = t.reshape(-1)
    return bool(torch.equal(flat, flat[:1].expand_as(flat)))


def shape_text(shape):
    return "torch.Size(" + str(list(shape)) + ")"


def main():
    with open(KB["refs_manifest"]) as f:
        refs = json.load(f)["trials"]
    try:
        with open(KB["outputs_manifest"]) as f:
            top = json.load(f)
        if isinstance(top, dict) and top.get("not_kernel_output") is not None:
            verdict("not-kernel-output", str(top["not_kernel_output"]))
        outs = top["trials"]
        if not isinstance(outs, list) or len(outs) != len(refs):
            raise ValueError("it lists %s trials" % (len(outs) if isinstance(outs, list) else "no"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        verdict("mismatch", "the candidate's run left no readable outputs.json (%s)" % e)
    try:
        patched = [str(p) for p in top.get("timer_patches", [])]
        fallback = top.get("fallback") is True
        streams = int(top.get("python_streams", 0))
    except (ValueError, TypeError, AttributeError) as e:
        verdict("mismatch", "the candidate's outputs.json is malformed (%s)" % e)
    trials = []
    for k, out in enumerate(outs):
        try:
            described = out["outputs"]
            ops = out.get("torch_ops", [])
            if not isinstance(described, list) or not isinstance(ops, list):
                raise TypeError("outputs or torch_ops is not a list")
            trials.append({"changed": [int(i) for i in out.get("inputs_changed", [])], "launched": int(out["launches"]),
                           "side": int(out.get("stream_launches", 0)), "ops": [str(o) for o in ops],
                           "outputs": described})
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            verdict("mismatch", "trial %d: the candidate's outputs.json is malformed (%s)" % (k, e))
    for k, t in enumerate(trials):
        if t["changed"]:
            verdict("input-mutated", "trial %d: forward changed its input argument(s) %s" % (k, t["changed"]))
        if t["launched"] <= 0:
            verdict("no-kernel", "trial %d: forward launched no kernel" % k)
        if t["side"] > 0:
            verdict("side-stream", "trial %d: forward launched %d kernel(s) on a stream of its own, not the default one" % (k, t["side"]))
    if streams > 0:
        verdict("side-stream", "the candidate made %d CUDA stream(s) of its own (torch.cuda.Stream)" % streams)
    if patched:
        verdict("timer-patch", "the candidate replaced %s" % ", ".join(patched[:8]))
    if fallback:
        verdict("fallback", "forward returned a result while every call into its extension failed: something else does the work")
    tol = KB["tolerance"]
    n_kernelbench = sum(1 for r in refs if not r.get("extra", False))
    for k, (ref, t) in enumerate(zip(refs, trials)):
        if ref.get("used", True) is False:
            continue
        # A value that is wrong only on an extra trial is its own status; the detail says which.
        values = "mismatch"
        if ref.get("extra", False):
            values = "input-specific"
            how = "inputs of both signs" if ref.get("signed", False) else "inputs of another seed"
            prefix = "right on KernelBench's %d trials, wrong on trial %d (%s): " % (n_kernelbench, k, how)
        else:
            prefix = ""
        if t["ops"]:
            verdict("torch-op", "trial %d: forward ran torch's computing operator(s) %s: the work must be the kernels'" %
                    (k, ", ".join(t["ops"][:8])))
        described = t["outputs"]
        if len(described) != len(ref["outputs"]):
            verdict("mismatch", "trial %d: Output count mismatch: Expected %d, got %d" % (k, len(ref["outputs"]), len(described)))
        for i, (rd, od) in enumerate(zip(ref["outputs"], described)):
            want = read_tensor(KB["refs"][k], rd)
            try:
                if list(od["shape"]) != list(rd["shape"]):
                    verdict("mismatch", "trial %d: Output shape mismatch: Expected %s, got %s" % (k, shape_text(rd["shape"]), shape_text(od["shape"])))
                if od["dtype"] != rd["dtype"]:
                    verdict("mismatch", "trial %d: Output dtype mismatch: Expected %s, got %s" % (k, rd["dtype"], od["dtype"]))
                got = read_tensor(KB["outputs"][k], od)
            except (KeyError, TypeError, ValueError, AttributeError, RuntimeError, OSError) as e:
                verdict("mismatch", "trial %d output %d: unreadable (%s)" % (k, i, e))
            if constant(got) and not constant(want):
                verdict("constant-output" if values == "mismatch" else values,
                        prefix + "trial %d output %d: every element is %s where the reference's are not all equal" % (k, i, got.reshape(-1)[0].item()))
            if not torch.allclose(want, got, atol=tol, rtol=tol):
                if want.is_floating_point():
                    diff = (want.double() - got.double()).abs()
                    detail = "max difference %.6g, mean %.6g" % (diff.max().item(), diff.mean().item())
                else:
                    detail = "%d of %d elements differ" % (int((want != got).sum()), want.numel())
                verdict(values, prefix + "trial %d output %d: Output mismatch (atol = rtol = %g): %s" % (k, i, tol, detail))
    print("T")


main()
