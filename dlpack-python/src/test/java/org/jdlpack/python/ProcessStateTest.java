package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jdlpack.abi.DLPackRuntime;
import org.junit.jupiter.api.Test;

/** Once Python runs in this JVM, jdlpack's process-wide state is kept on purpose, and a release says why. */
class ProcessStateTest {

    @Test
    void releaseRefusesOncePythonStartedAndSaysWhatToDoInstead() {
        PythonPeers.numpy().evalString("1");
        assertThatThrownBy(DLPackRuntime::release).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("dlpack-python's embedded interpreter").hasMessageContaining("engine's own class path");
    }
}
