/**
 * The native plumbing every jdlpack module's call layer is built on, exported to those modules
 * only: loading a library and binding its functions with a missing symbol named, the call shapes
 * (out-parameters, return codes), reports that never throw (for upcalls and cleanups), and the
 * native-access message that names the flag. Not an API.
 */
package org.jdlpack.abi.plumbing;
