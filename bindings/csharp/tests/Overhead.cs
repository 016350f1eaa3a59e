// Per-call overhead of a tiny op through the C# binding, for bench/ffi_overhead (issue 12): N times, the
// ember_tensor_add of two one-element tensors and the free of its result, through the safe layer (Tensor.Add and
// Dispose: SafeHandle marshalling, the status check, the wrapper). Prints one line:
//
//   csharp ns_per_call=<float>
//
//   mono EmberOverhead.exe [N=200000]
using System;
using System.Diagnostics;
using System.Globalization;
using Ember;

static class Overhead
{
    static int Main(string[] args)
    {
        int n = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 200000;
        if (n <= 0)
        {
            Console.Error.WriteLine("usage: EmberOverhead.exe [N > 0]");
            return 2;
        }
        using (var a = Tensor.FromArray(new float[] { 1 }, 1))
        using (var b = Tensor.FromArray(new float[] { 2 }, 1))
        {
            for (int i = 0; i < 20000; ++i) a.Add(b).Dispose();  // JIT and allocator warm-up, as the other languages'
            var clock = Stopwatch.StartNew();
            for (int i = 0; i < n; ++i) a.Add(b).Dispose();
            clock.Stop();
            using (var c = a.Add(b))
                if (c.Item() != 3.0) throw new InvalidOperationException("1 + 2 gave " + c.Item());
            double ns = clock.Elapsed.TotalMilliseconds * 1e6 / n;
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "csharp ns_per_call={0:F1}", ns));
        }
        return 0;
    }
}
