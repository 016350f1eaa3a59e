using System;
using Ember.Native;

namespace Ember
{
    /// <summary>Layer descriptions for Module.Sequential, with PyTorch's defaults (ember_layer_init).</summary>
    public static class Layer
    {
        public static EmberLayerDesc Of(EmberLayerKind kind)
        {
            var desc = new EmberLayerDesc();
            Interop.Check(NativeMethods.ember_layer_init(ref desc, kind));
            return desc;
        }

        public static EmberLayerDesc Linear(long inFeatures, long outFeatures, bool bias = true)
        {
            var desc = Of(EmberLayerKind.Linear);
            desc.in_features = inFeatures;
            desc.out_features = outFeatures;
            desc.bias = bias ? 1 : 0;
            return desc;
        }

        public static EmberLayerDesc Relu() { return Of(EmberLayerKind.Relu); }
    }

    /// <summary>An Ember module (internally synchronized: forward may run from many threads at once).</summary>
    public sealed class Module : IDisposable
    {
        public EmberModuleHandle Handle { get; private set; }

        public Module(EmberModuleHandle handle) { Handle = handle; }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>A Sequential of the layers on the CPU; params are drawn now from the generator Library.Seed
        /// seeded.</summary>
        public static Module Sequential(params EmberLayerDesc[] layers)
        {
            EmberModuleHandle result;
            Interop.Check(NativeMethods.ember_module_sequential(EmberDeviceHandle.Null, layers,
                                                                Interop.Size(layers.Length), out result));
            return new Module(result);
        }

        public Tensor Forward(Tensor x, EmberMode mode)
        {
            EmberTensorHandle result;
            Interop.Check(NativeMethods.ember_module_forward(Handle, x.Handle, mode, out result));
            return new Tensor(result);
        }

        public long ParamCount
        {
            get
            {
                UIntPtr count;
                Interop.Check(NativeMethods.ember_module_param_count(Handle, out count));
                return Interop.Long(count);
            }
        }

        /// <summary>"layers.0.weight".</summary>
        public string ParamName(long index)
        {
            return Interop.ReadString((byte[] buffer, UIntPtr capacity, out UIntPtr length) =>
                NativeMethods.ember_module_param_name(Handle, Interop.Size(index), buffer, capacity, out length));
        }

        /// <summary>dtype, role, id, shape (shape[0..rank)) of a param.</summary>
        public EmberParamInfo ParamInfo(long index)
        {
            var info = new EmberParamInfo();
            Interop.Check(NativeMethods.ember_param_info_init(ref info));
            Interop.Check(NativeMethods.ember_module_param_info(Handle, Interop.Size(index), ref info));
            return info;
        }

        /// <summary>Saves the params as a record file (binary, full precision).</summary>
        public void Save(string path)
        {
            Interop.Check(NativeMethods.ember_module_save(Handle, Interop.Utf8z(path), IntPtr.Zero));
        }

        public void Save(string path, EmberRecordOptions options)
        {
            Interop.Check(NativeMethods.ember_module_save(Handle, Interop.Utf8z(path), ref options));
        }

        /// <summary>Loads a record file; the report says what was missing, unexpected or mismatching. A failed load
        /// throws EmberLoadException with the report when Ember made one (a strict load of a mismatching record).
        /// </summary>
        public LoadReport Load(string path, EmberLoadMode mode = EmberLoadMode.Strict)
        {
            EmberLoadReportHandle report;
            var status = NativeMethods.ember_module_load(Handle, Interop.Utf8z(path), mode, out report);
            if (status == EmberStatus.Ok) return new LoadReport(report);
            string message = Library.LastError;  // before the report's own calls
            using (var failed = new LoadReport(report))
            {
                if (report.IsInvalid) throw new EmberException(status, message);
                throw new EmberLoadException(status, message, failed.Text);
            }
        }

        public Record ToRecord()
        {
            EmberRecordHandle result;
            Interop.Check(NativeMethods.ember_module_to_record(Handle, out result));
            return new Record(result);
        }
    }

    /// <summary>A snapshot of a module's params or an optimizer's state.</summary>
    public sealed class Record : IDisposable
    {
        public EmberRecordHandle Handle { get; private set; }

        public Record(EmberRecordHandle handle) { Handle = handle; }

        public void Dispose() { Handle.Dispose(); }

        public long EntryCount
        {
            get
            {
                UIntPtr count;
                Interop.Check(NativeMethods.ember_record_entry_count(Handle, out count));
                return Interop.Long(count);
            }
        }

        /// <summary>The bytes of the record file (binary, full precision), as ember_module_save writes them.</summary>
        public byte[] ToBytes()
        {
            UIntPtr size;
            var status = NativeMethods.ember_record_to_bytes(Handle, IntPtr.Zero, IntPtr.Zero, UIntPtr.Zero, out size);
            if (status != EmberStatus.Ok && status != EmberStatus.ErrBufferTooSmall) Interop.Check(status);
            var bytes = new byte[Interop.Long(size)];
            Interop.Check(Interop.Pinned(bytes, pointer => NativeMethods.ember_record_to_bytes(
                Handle, IntPtr.Zero, pointer, Interop.Size(bytes.Length), out size)));
            return bytes;
        }
    }

    /// <summary>What a load found: missing, unexpected and mismatching entries.</summary>
    public sealed class LoadReport : IDisposable
    {
        public EmberLoadReportHandle Handle { get; private set; }

        public LoadReport(EmberLoadReportHandle handle) { Handle = handle; }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>One entry per line; "" when everything matched.</summary>
        public string Text
        {
            get
            {
                return Interop.ReadString((byte[] buffer, UIntPtr capacity, out UIntPtr length) =>
                    NativeMethods.ember_load_report_text(Handle, buffer, capacity, out length));
            }
        }
    }
}
