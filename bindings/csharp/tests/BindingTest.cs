// The common binding test of issue 12 for C#: the generated layout against the description, every declared entry
// point present in libember, Ember's errors as EmberException (shape mismatch, freed handle, strict load), strings,
// the no-grad scope, and the digits MLP trained exactly as examples/c/train_digits.c does, whose saved record must be
// byte-identical to the one train_digits_c writes.
//
//   mono EmberBindingTest.exe TRAIN_DIGITS_C DIGITS.csv.gz WORKDIR
//
// Run with EMBER_NUM_THREADS=1 (the meson test sets it; the C run inherits it). Exits 1 when any check fails.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using Ember;
using Ember.Native;
using Module = Ember.Module;  // System.Reflection has a Module too

static class BindingTest
{
    static int failures;

    static void Expect(bool condition, string what)
    {
        if (condition) return;
        ++failures;
        Console.WriteLine("  FAILED: " + what);
    }

    static void Run(string name, Action test)
    {
        Console.WriteLine("[ RUN  ] " + name);
        int before = failures;
        try
        {
            test();
        }
        catch (Exception e)
        {
            ++failures;
            Console.WriteLine("  FAILED with " + e);
        }
        Console.WriteLine((failures == before ? "[  OK  ] " : "[ FAIL ] ") + name);
    }

    static T Throws<T>(Action action, string what) where T : Exception
    {
        try
        {
            action();
        }
        catch (T e)
        {
            return e;
        }
        Expect(false, what + " did not throw " + typeof(T).Name);
        return null;
    }

    // ------------------------------------------------------------------ layout and entry points
    static void StructLayoutsMatchTheDescription()
    {
        Expect(Layout.Structs.Length > 0, "the description has structs");
        foreach (var s in Layout.Structs)
        {
            int size = Marshal.SizeOf(s.Type);
            Expect(size == s.Size, string.Format("Marshal.SizeOf({0}) = {1}, the description says {2}", s.CName, size,
                                                 s.Size));
            for (int i = 0; i < s.Fields.Length; ++i)
            {
                long offset = Marshal.OffsetOf(s.Type, s.Fields[i]).ToInt64();
                Expect(offset == s.Offsets[i], string.Format("{0}.{1} at {2}, the description says {3}", s.CName,
                                                             s.Fields[i], offset, s.Offsets[i]));
            }
        }
    }

    // The status enum against the library itself (ember_status_name of each value is its C name), and every
    // generated member against the value the description gives its C name.
    static void EnumValuesMatchTheLibrary()
    {
        int statuses = 0;
        foreach (var v in Layout.EnumValues)
        {
            long value = Convert.ToInt64(Enum.Parse(v.Type, v.Member));
            Expect(value == v.Value, string.Format("{0}.{1} = {2}, {3} is {4}", v.Type.Name, v.Member, value, v.CName,
                                                   v.Value));
            if (v.Type != typeof(EmberStatus)) continue;
            ++statuses;
            string name = EmberException.StatusName((EmberStatus)value);
            Expect(name == v.CName, string.Format("ember_status_name({0}) = {1}, the binding says {2}", value, name,
                                                  v.CName));
        }
        Expect(statuses > 10, "status values checked: " + statuses);
        using (var f64 = Tensor.FromArray(new double[] { 1 }, 1))
        using (var i64 = Tensor.FromArray(new long[] { 1, 2 }, 2))
        using (var f32 = Tensor.FromArray(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3))
        {
            Expect(f64.Dtype == EmberDtype.F64 && i64.Dtype == EmberDtype.I64 && f32.Dtype == EmberDtype.F32,
                   "dtypes read back");
            Expect(string.Join(",", f32.Shape) == "2,3" && f32.Numel == 6, "shape and numel");
            Expect(string.Join(",", f32.ToFloatArray()) == "1,2,3,4,5,6", "values read back");
            using (var sum = f32 + f32)
                Expect(string.Join(",", sum.ToLongArray()) == "2,4,6,8,10,12", "f32 + f32 read as I64");
        }
    }

    [DllImport("libdl.so.2")] static extern IntPtr dlopen(string file, int mode);
    [DllImport("libdl.so.2")] static extern IntPtr dlsym(IntPtr library, string symbol);

    static void EveryDeclaredFunctionIsExported(string libraryPath)
    {
        IntPtr library = dlopen(libraryPath, 2 /* RTLD_NOW */);
        Expect(library != IntPtr.Zero, "dlopen " + libraryPath);
        if (library == IntPtr.Zero) return;
        int count = 0;
        foreach (var method in typeof(NativeMethods).GetMethods(BindingFlags.Public | BindingFlags.Static))
        {
            var import = (DllImportAttribute)Attribute.GetCustomAttribute(method, typeof(DllImportAttribute));
            if (import == null) continue;
            ++count;
            Expect(dlsym(library, import.EntryPoint) != IntPtr.Zero, import.EntryPoint + " is not exported");
        }
        Expect(count > 50, "NativeMethods declares the functions (" + count + ")");
        Console.WriteLine("  {0} P/Invoke declarations, each exported by {1}", count, Path.GetFileName(libraryPath));
    }

    static void VersionAndStrings()
    {
        Expect(Library.AbiVersion == NativeMethods.VersionAbi, "ABI version of the loaded library");
        string expected = string.Format("{0}.{1}.{2}", NativeMethods.VersionMajor, NativeMethods.VersionMinor,
                                        NativeMethods.VersionPatch);
        // Twice: a `string` return would have the runtime free Ember's static string after the first call.
        Expect(Library.Version == expected && Library.Version == expected, "version " + Library.Version);
        Expect(EmberException.StatusName(EmberStatus.ErrShape) == "EMBER_ERR_SHAPE", "ember_status_name");
        Expect(Library.VersionNumber == NativeMethods.EMBER_VERSION_NUMBER, "version number " + Library.VersionNumber);
    }

    // ------------------------------------------------------------------ errors
    static void ShapeMismatchIsAnEmberException()
    {
        using (var a = Tensor.FromArray(new float[6], 2, 3))
        using (var b = Tensor.FromArray(new float[20], 4, 5))
        {
            var e = Throws<EmberException>(() => a.Matmul(b).Dispose(), "matmul [2,3] x [4,5]");
            if (e == null) return;
            Console.WriteLine("  " + e.Message);
            Expect(e.Status == EmberStatus.ErrShape, "status " + e.Status);
            Expect(e.EmberMessage.Length > 0 && e.EmberMessage == Library.LastError, "Ember's message");
            Expect(e.Message.StartsWith("EMBER_ERR_SHAPE: "), "Message names the status");
        }
    }

    static void FreedHandleIsAnEmberException()
    {
        var t = Tensor.FromArray(new float[] { 1, 2 }, 2);
        // Freed behind the wrapper's back (as hand-written interop code may do): Ember must report it, not crash.
        Expect(NativeMethods.ember_tensor_free(t.Handle.DangerousGetHandle()) == EmberStatus.Ok, "free by hand");
        var e = Throws<EmberException>(() => t.Add(t).Dispose(), "add on a freed handle");
        if (e != null)
        {
            Console.WriteLine("  " + e.Message);
            Expect(e.Status == EmberStatus.ErrInvalidHandle, "status " + e.Status);
            Expect(e.EmberMessage.Length > 0 && e.EmberMessage == Library.LastError, "Ember's message");
        }
        // New tensors may take the freed slot; the stale wrapper's own free (Dispose, or its finalizer) must then
        // report the stale handle (ReleaseHandle returns false) and leave them alive.
        var others = new Tensor[8];
        for (int i = 0; i < others.Length; ++i) others[i] = Tensor.FromArray(new float[] { i }, 1);
        t.Dispose();
        for (int i = 0; i < others.Length; ++i)
        {
            Expect(others[i].Item() == i, "a tensor made after the free by hand is still alive");
            others[i].Dispose();
        }

        // A disposed wrapper never reaches Ember: the SafeHandle marshaller refuses it.
        var u = Tensor.FromArray(new float[] { 1 }, 1);
        u.Dispose();
        Throws<ObjectDisposedException>(() => u.Item(), "Item on a disposed tensor");
    }

    // Dispose runs the description's free function (the generated ReleaseHandle): the pointer is stale afterwards.
    static void DisposeFreesTheHandle()
    {
        var t = Tensor.FromArray(new float[] { 1 }, 1);
        IntPtr pointer = t.Handle.DangerousGetHandle();
        using (var alias = new EmberTensorHandle(pointer, false))
        {
            double value;
            Expect(NativeMethods.ember_tensor_item(alias, out value) == EmberStatus.Ok && value == 1, "live before");
            t.Dispose();
            Expect(NativeMethods.ember_tensor_item(alias, out value) == EmberStatus.ErrInvalidHandle, "freed after");
        }
    }

    // A strict load of a mismatching record: EmberLoadException with Ember's message and the report, and reading the
    // report (a length query, then the text) leaves Ember's last error as the failed load set it.
    static void StrictLoadFailureKeepsItsReport(string workDir)
    {
        string path = Path.Combine(workDir, "linear_4_3.emr");
        using (var small = Module.Sequential(Layer.Linear(4, 3))) small.Save(path);
        using (var other = Module.Sequential(Layer.Linear(4, 2)))
        {
            var e = Throws<EmberLoadException>(() => other.Load(path, EmberLoadMode.Strict).Dispose(), "strict load");
            if (e != null)
            {
                Console.WriteLine("  " + e.Message.Replace("\n", "\n  "));
                Expect(e.Status == EmberStatus.ErrRecord, "status " + e.Status);
                Expect(e.EmberMessage.Length > 0 && e.EmberMessage == Library.LastError, "Ember's message kept");
                Expect(e.Report.Contains("layers.0.weight"), "the report names the mismatching param");
            }
            using (var report = other.Load(path, EmberLoadMode.Partial))
                Expect(report.Text.Contains("layers.0.weight"), "a partial load reports the mismatch too");
        }
    }

    static void NoGradScopeNests()
    {
        Expect(NoGrad.IsGradEnabled, "grad enabled outside");
        using (new NoGrad())
        {
            using (new NoGrad()) Expect(!NoGrad.IsGradEnabled, "disabled in the inner scope");
            Expect(!NoGrad.IsGradEnabled, "still disabled in the outer scope");
        }
        Expect(NoGrad.IsGradEnabled, "enabled again after the scopes");
    }

    // ------------------------------------------------------------------ digits, as examples/c/train_digits.c
    const int Pixels = 64, Classes = 10, Batch = 64;

    sealed class Digits
    {
        public float[] X;  // [n, 64], pixel / 16
        public long[] Y;
        public int N;
    }

    static Digits LoadDigits(string path)
    {
        var x = new List<float>();
        var y = new List<long>();
        using (var file = File.OpenRead(path))
        using (var gz = new System.IO.Compression.GZipStream(file, System.IO.Compression.CompressionMode.Decompress))
        using (var reader = new StreamReader(gz))
        {
            string line;
            while ((line = reader.ReadLine()) != null)
            {
                var fields = line.Split(',');
                if (fields.Length != Pixels + 1) continue;  // blank or malformed line, as the C reader skips it
                for (int k = 0; k < Pixels; ++k) x.Add(int.Parse(fields[k], CultureInfo.InvariantCulture) / 16.0f);
                y.Add(int.Parse(fields[Pixels], CultureInfo.InvariantCulture));
            }
        }
        return new Digits { X = x.ToArray(), Y = y.ToArray(), N = y.Count };
    }

    // xorshift64*, seeded as digits_data.h, so the order is the C example's.
    static ulong rngState = 2024;

    static ulong RngNext()
    {
        rngState ^= rngState >> 12;
        rngState ^= rngState << 25;
        rngState ^= rngState >> 27;
        return unchecked(rngState * 2685821657736338717UL);
    }

    static void Shuffle(long[] idx, int n)
    {
        for (long i = n; i > 1; --i)
        {
            long j = (long)(RngNext() % (ulong)i), t = idx[i - 1];
            idx[i - 1] = idx[j];
            idx[j] = t;
        }
    }

    static void MakeBatch(Digits d, long[] idx, int start, int n, out Tensor x, out Tensor y)
    {
        var xb = new float[n * Pixels];
        var yb = new long[n];
        for (int i = 0; i < n; ++i)
        {
            Array.Copy(d.X, idx[start + i] * Pixels, xb, i * Pixels, Pixels);
            yb[i] = d.Y[idx[start + i]];
        }
        x = Tensor.FromArray(xb, n, Pixels);
        y = Tensor.FromArray(yb, n);
    }

    static double Accuracy(Module model, Digits d, long[] idx, int start, int n)
    {
        Tensor x, y;
        MakeBatch(d, idx, start, n, out x, out y);
        using (x)
        using (y)
        {
            Tensor logits;
            using (new NoGrad()) logits = model.Forward(x, EmberMode.Eval);
            long[] labels;
            using (logits)
            using (var pred = logits.Argmax(1))
                labels = pred.ToLongArray();
            int correct = 0;
            for (int i = 0; i < n; ++i) correct += labels[i] == d.Y[idx[start + i]] ? 1 : 0;
            return (double)correct / n;
        }
    }

    // Returns the mean training loss of each epoch.
    static List<double> TrainDigits(string dataPath, int epochs, string recordPath)
    {
        var data = LoadDigits(dataPath);
        Console.WriteLine("  ember {0} (C ABI {1}): {2} digits from {3}", Library.Version, Library.AbiVersion, data.N,
                          dataPath);
        var order = new long[data.N];
        for (int i = 0; i < data.N; ++i) order[i] = i;
        Shuffle(order, data.N);
        int nTrain = data.N * 4 / 5, nTest = data.N - nTrain;

        var losses = new List<double>();
        Library.Seed(42);
        using (var model = Module.Sequential(Layer.Linear(Pixels, 256), Layer.Relu(), Layer.Linear(256, 256),
                                             Layer.Relu(), Layer.Linear(256, Classes)))
        using (var optim = Optimizer.Adam(model, 1e-3))
        {
            Console.WriteLine("  model: {0} parameter tensors", model.ParamCount);
            for (int epoch = 1; epoch <= epochs; ++epoch)
            {
                double lossSum = 0.0;
                Shuffle(order, nTrain);
                for (int start = 0; start < nTrain; start += Batch)
                {
                    int n = Math.Min(nTrain - start, Batch);
                    Tensor x, y;
                    MakeBatch(data, order, start, n, out x, out y);
                    using (x)
                    using (y)
                    using (var logits = model.Forward(x, EmberMode.Train))
                    using (var loss = Tensor.CrossEntropy(logits, y, EmberReduction.Mean))
                    {
                        lossSum += loss.Item() * n;
                        using (var grads = loss.Backward()) optim.Step(grads);
                    }
                }
                double acc = Accuracy(model, data, order, nTrain, nTest);
                losses.Add(lossSum / nTrain);
                Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                                                "  epoch {0}/{1}  loss {2:F4}  test accuracy {3:F1}%", epoch, epochs,
                                                lossSum / nTrain, 100.0 * acc));
            }
            model.Save(recordPath);
            using (var record = model.ToRecord())
            {
                Expect(record.EntryCount == model.ParamCount, "record entries");
                Expect(Equal(record.ToBytes(), File.ReadAllBytes(recordPath)), "ToBytes equals the saved file");
            }
            Expect(model.ParamName(0) == "layers.0.weight", "first param name " + model.ParamName(0));
            var info = model.ParamInfo(0);  // a struct with an array field, filled by Ember (weights are [in, out])
            Expect(info.rank == 2 && info.shape[0] == Pixels && info.shape[1] == 256 && info.numel == Pixels * 256 &&
                   info.dtype == EmberDtype.F32, "layers.0.weight info");
        }
        return losses;
    }

    static bool Equal(byte[] a, byte[] b)
    {
        if (a.Length != b.Length) return false;
        for (int i = 0; i < a.Length; ++i)
            if (a[i] != b[i]) return false;
        return true;
    }

    static void DigitsRecordMatchesTheCExample(string trainDigitsC, string dataPath, string workDir)
    {
        const int epochs = 2;
        string reference = Path.Combine(workDir, "digits_c.emr"), mine = Path.Combine(workDir, "digits_csharp.emr");
        var info = new ProcessStartInfo(trainDigitsC, string.Format("\"{0}\" {1} \"{2}\"", dataPath, epochs, reference))
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
        };
        var cLosses = new List<double>();
        using (var process = Process.Start(info))
        {
            string line;
            while ((line = process.StandardOutput.ReadLine()) != null)
            {
                Console.WriteLine("  C: " + line);
                int at = line.IndexOf("  loss ", StringComparison.Ordinal);
                if (line.StartsWith("epoch ") && at > 0)
                    cLosses.Add(double.Parse(line.Substring(at + 7).Split(' ')[0], CultureInfo.InvariantCulture));
            }
            process.WaitForExit();
            Expect(process.ExitCode == 0, "train_digits_c exit status " + process.ExitCode);
        }

        var losses = TrainDigits(dataPath, epochs, mine);
        Expect(cLosses.Count == epochs && losses.Count == epochs, "one loss per epoch from both");
        for (int i = 0; i < Math.Min(cLosses.Count, losses.Count); ++i)
            Expect(Math.Abs(losses[i] - cLosses[i]) <= 0.00005 + 1e-12, "epoch " + (i + 1) + " loss as C prints it");
        byte[] a = File.ReadAllBytes(reference), b = File.ReadAllBytes(mine);
        Expect(Equal(a, b), string.Format("records differ ({0} bytes from C, {1} from C#)", a.Length, b.Length));
        Console.WriteLine("  records: {0} bytes each, identical: {1}", a.Length, Equal(a, b));
    }

    static int Main(string[] args)
    {
        if (args.Length != 4)
        {
            Console.Error.WriteLine("usage: EmberBindingTest.exe LIBEMBER TRAIN_DIGITS_C DIGITS.csv.gz WORKDIR");
            return 2;
        }
        Directory.CreateDirectory(args[3]);
        Run("StructLayoutsMatchTheDescription", StructLayoutsMatchTheDescription);
        Run("EveryDeclaredFunctionIsExported", () => EveryDeclaredFunctionIsExported(args[0]));
        Run("EnumValuesMatchTheLibrary", EnumValuesMatchTheLibrary);
        Run("VersionAndStrings", VersionAndStrings);
        Run("ShapeMismatchIsAnEmberException", ShapeMismatchIsAnEmberException);
        Run("FreedHandleIsAnEmberException", FreedHandleIsAnEmberException);
        Run("DisposeFreesTheHandle", DisposeFreesTheHandle);
        Run("NoGradScopeNests", NoGradScopeNests);
        // First of the tests that make modules: param ids come from a process-wide counter and are part of the
        // record, so the digits model must be this process's first module, as it is train_digits_c's.
        Run("DigitsRecordMatchesTheCExample", () => DigitsRecordMatchesTheCExample(args[1], args[2], args[3]));
        Run("StrictLoadFailureKeepsItsReport", () => StrictLoadFailureKeepsItsReport(args[3]));
        Console.WriteLine(failures == 0 ? "all passed" : failures + " check(s) failed");
        return failures == 0 ? 0 : 1;
    }
}
