using System;
using Ember.Native;

namespace Ember
{
    /// <summary>An Ember tensor (immutable value; any number of threads may read it at once). Dispose it when done:
    /// the handle is freed then, or by its SafeHandle's finalizer when the tensor is garbage.</summary>
    public sealed class Tensor : IDisposable
    {
        /// <summary>The owned handle, for calls into NativeMethods.</summary>
        public EmberTensorHandle Handle { get; private set; }

        /// <summary>Takes ownership of a handle Ember returned.</summary>
        public Tensor(EmberTensorHandle handle)
        {
            if (handle == null || handle.IsInvalid) throw new ArgumentException("not a tensor handle", "handle");
            Handle = handle;
        }

        public void Dispose() { Handle.Dispose(); }

        // ------------------------------------------------------------------ creation (a copy of host data)
        public static Tensor FromArray(float[] data, params long[] shape)
        {
            return FromData(EmberDtype.F32, data, 4, shape);
        }

        public static Tensor FromArray(double[] data, params long[] shape)
        {
            return FromData(EmberDtype.F64, data, 8, shape);
        }

        public static Tensor FromArray(long[] data, params long[] shape)
        {
            return FromData(EmberDtype.I64, data, 8, shape);
        }

        public static Tensor FromArray(int[] data, params long[] shape)
        {
            return FromData(EmberDtype.I32, data, 4, shape);
        }

        private static Tensor FromData(EmberDtype dtype, Array data, int elementSize, long[] shape)
        {
            if (data == null) throw new ArgumentNullException("data");
            if (shape == null) shape = new long[0];
            EmberTensorHandle result = null;
            Interop.Check(Interop.Pinned(data, pointer => NativeMethods.ember_tensor_from_data(
                EmberDeviceHandle.Null, dtype, pointer, Interop.Size((long)data.Length * elementSize), shape,
                Interop.Size(shape.Length), out result)));
            return new Tensor(result);
        }

        // ------------------------------------------------------------------ properties
        public EmberDtype Dtype
        {
            get
            {
                EmberDtype dtype;
                Interop.Check(NativeMethods.ember_tensor_dtype(Handle, out dtype));
                return dtype;
            }
        }

        public long[] Shape
        {
            get
            {
                UIntPtr rank;
                Interop.Check(NativeMethods.ember_tensor_rank(Handle, out rank));
                var dims = new long[Interop.Long(rank)];
                Interop.Check(NativeMethods.ember_tensor_shape(Handle, dims, rank, out rank));
                return dims;
            }
        }

        public long Numel
        {
            get
            {
                long numel;
                Interop.Check(NativeMethods.ember_tensor_numel(Handle, out numel));
                return numel;
            }
        }

        /// <summary>The value of a one-element tensor.</summary>
        public double Item()
        {
            double value;
            Interop.Check(NativeMethods.ember_tensor_item(Handle, out value));
            return value;
        }

        // ---------------------------------------------------------------- reading back, converted to the array's type
        public float[] ToFloatArray() { return CopyTo(new float[Numel], EmberDtype.F32, 4); }
        public double[] ToDoubleArray() { return CopyTo(new double[Numel], EmberDtype.F64, 8); }
        public long[] ToLongArray() { return CopyTo(new long[Numel], EmberDtype.I64, 8); }

        private T[] CopyTo<T>(T[] buffer, EmberDtype dtype, int elementSize)
        {
            UIntPtr written = UIntPtr.Zero;
            Interop.Check(Interop.Pinned(buffer, pointer => NativeMethods.ember_tensor_copy_to(
                Handle, dtype, pointer, Interop.Size((long)buffer.Length * elementSize), out written)));
            return buffer;
        }

        // ------------------------------------------------------------------ ops: each result is a new tensor
        private delegate EmberStatus Binary(EmberTensorHandle a, EmberTensorHandle b, out EmberTensorHandle result);

        private static Tensor Apply(Binary op, Tensor a, Tensor b)
        {
            EmberTensorHandle result;
            Interop.Check(op(a.Handle, b.Handle, out result));
            return new Tensor(result);
        }

        // Made once: a method group converted at each call would allocate a delegate per op.
        private static readonly Binary AddOp = NativeMethods.ember_tensor_add;
        private static readonly Binary SubOp = NativeMethods.ember_tensor_sub;
        private static readonly Binary MulOp = NativeMethods.ember_tensor_mul;
        private static readonly Binary MatmulOp = NativeMethods.ember_tensor_matmul;

        public Tensor Add(Tensor other) { return Apply(AddOp, this, other); }
        public Tensor Sub(Tensor other) { return Apply(SubOp, this, other); }
        public Tensor Mul(Tensor other) { return Apply(MulOp, this, other); }
        public Tensor Matmul(Tensor other) { return Apply(MatmulOp, this, other); }

        /// <summary>Operators allocate a new tensor each: dispose the result (not the operands' job).</summary>
        public static Tensor operator +(Tensor a, Tensor b) { return a.Add(b); }
        public static Tensor operator -(Tensor a, Tensor b) { return a.Sub(b); }
        public static Tensor operator *(Tensor a, Tensor b) { return a.Mul(b); }

        /// <summary>I64 indices of the maximum along dim.</summary>
        public Tensor Argmax(long dim, bool keepdim = false)
        {
            EmberTensorHandle result;
            Interop.Check(NativeMethods.ember_tensor_argmax(Handle, dim, keepdim ? 1 : 0, out result));
            return new Tensor(result);
        }

        /// <summary>Cross-entropy of logits [N, C] against int class indices [N] (PyTorch semantics).</summary>
        public static Tensor CrossEntropy(Tensor logits, Tensor targets, EmberReduction reduction = EmberReduction.Mean)
        {
            EmberTensorHandle result;
            Interop.Check(NativeMethods.ember_loss_cross_entropy(logits.Handle, targets.Handle, reduction, out result));
            return new Tensor(result);
        }

        /// <summary>The reverse pass from this one-element tensor (it consumes the graph).</summary>
        public Grads Backward()
        {
            EmberGradsHandle result;
            Interop.Check(NativeMethods.ember_tensor_backward(Handle, EmberTensorHandle.Null, out result));
            return new Grads(result);
        }
    }

    /// <summary>Gradients of one backward pass.</summary>
    public sealed class Grads : IDisposable
    {
        public EmberGradsHandle Handle { get; private set; }

        public Grads(EmberGradsHandle handle) { Handle = handle; }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>The gradient of leaf `tensor`, or null when the backward pass did not reach it.</summary>
        public Tensor Get(Tensor tensor)
        {
            EmberTensorHandle result;
            Interop.Check(NativeMethods.ember_grads_get(Handle, tensor.Handle, out result));
            return result.IsInvalid ? null : new Tensor(result);
        }
    }
}
