package com.example.flink;

import org.apache.flink.api.common.accumulators.DoubleCounter;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.jdlpack.abi.DLPackRuntime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * For each number n: a 2x2 float tensor [n, n+1, n+2, n+3] made in Java, exported as a DLPack
 * tensor and taken back as a native consumer would take it (the import's close calls the export's
 * deleter, an upcall into jdlpack), and its last element read through the import. The sum of those
 * elements and the number of tensors go to the job's accumulators, which the job's result carries.
 *
 * <p>jdlpack is in the job jar, so it lives in the job's class loader: the function registers
 * {@link DLPackRuntime#release()} as that loader's release hook, which lets the TaskManager unload
 * the job's classes once the job has ended.
 */
public class EmbedFunction extends RichMapFunction<Long, Long> {

    private static final long serialVersionUID = 1L;

    private transient DoubleCounter sum;
    private transient LongCounter tensors;

    @Override
    public void open(OpenContext context) {
        // Once per class loader, however many functions and subtasks register it (docs/engines.md).
        getRuntimeContext().registerUserCodeClassLoaderReleaseHookIfAbsent("jdlpack", DLPackRuntime::release);
        sum = getRuntimeContext().getDoubleCounter("sum");
        tensors = getRuntimeContext().getLongCounter("tensors");
    }

    @Override
    public Long map(Long value) {
        float n = value;
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {n, n + 1, n + 2, n + 3}, 2, 2);
             ImportedTensor taken = tensor.export().importTensor()) {
            sum.add(HostTensorView.of(taken).getFloatAt(1, 1));
            tensors.add(1);
        }   // the import's close ran the export's deleter; the tensor's close frees its memory
        return value;
    }
}
