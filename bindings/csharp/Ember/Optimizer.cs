using System;
using Ember.Native;

namespace Ember
{
    /// <summary>An optimizer over a module's trainable params (it keeps the module alive).</summary>
    public sealed class Optimizer : IDisposable
    {
        public EmberOptimizerHandle Handle { get; private set; }

        public Optimizer(EmberOptimizerHandle handle) { Handle = handle; }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>PyTorch's defaults for `kind` (ember_optimizer_options_init); change fields, then Create.</summary>
        public static EmberOptimizerOptions Options(EmberOptimizerKind kind)
        {
            var options = new EmberOptimizerOptions();
            Interop.Check(NativeMethods.ember_optimizer_options_init(ref options, kind));
            return options;
        }

        public static Optimizer Create(Module module, EmberOptimizerOptions options)
        {
            EmberOptimizerHandle result;
            Interop.Check(NativeMethods.ember_optimizer_create(module.Handle, ref options, out result));
            return new Optimizer(result);
        }

        public static Optimizer Adam(Module module, double lr = 1e-3)
        {
            var options = Options(EmberOptimizerKind.Adam);
            options.lr = lr;
            return Create(module, options);
        }

        /// <summary>One update with the pending gradients plus `grads` (may be null).</summary>
        public void Step(Grads grads)
        {
            var handle = grads == null ? EmberGradsHandle.Null : grads.Handle;
            Interop.Check(NativeMethods.ember_optimizer_step(Handle, handle));
        }

        public void ZeroGrad() { Interop.Check(NativeMethods.ember_optimizer_zero_grad(Handle)); }

        public double Lr
        {
            get
            {
                double lr;
                Interop.Check(NativeMethods.ember_optimizer_get_lr(Handle, out lr));
                return lr;
            }
            set { Interop.Check(NativeMethods.ember_optimizer_set_lr(Handle, value)); }
        }

        /// <summary>Saves the optimizer state (moments, step counts) as a record file.</summary>
        public void Save(string path)
        {
            Interop.Check(NativeMethods.ember_optimizer_save(Handle, Interop.Utf8z(path), IntPtr.Zero));
        }
    }
}
