package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a C-route test that leaves an ONNX Runtime object alive that it made (a value, session,
 * binding, session options, type-and-shape info), or released one twice (a count below where it
 * began): {@link OrtApi}'s counters, read before and after each test.
 */
final class NoOrtObjectLeft implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NoOrtObjectLeft.class);

    private static Map<String, AtomicLong> counters() {
        Map<String, AtomicLong> counters = new LinkedHashMap<>();
        counters.put("OrtValues", OrtApi.LIVE_VALUES);
        counters.put("OrtSessions", OrtApi.LIVE_SESSIONS);
        counters.put("OrtIoBindings", OrtApi.LIVE_IO_BINDINGS);
        counters.put("OrtSessionOptions", OrtApi.LIVE_SESSION_OPTIONS);
        counters.put("OrtTensorTypeAndShapeInfos", OrtApi.LIVE_TYPE_AND_SHAPE_INFOS);
        return counters;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        OrtApi.require();
        Map<String, Long> before = new LinkedHashMap<>();
        counters().forEach((name, counter) -> before.put(name, counter.get()));
        context.getStore(NS).put("before", before);
    }

    @Override
    @SuppressWarnings("unchecked")
    public void afterEach(ExtensionContext context) {
        Map<String, Long> before = context.getStore(NS).get("before", Map.class);
        counters().forEach((name, counter) -> assertThat(counter.get()).as(name + " alive after the test").isEqualTo(before.get(name)));
    }
}
