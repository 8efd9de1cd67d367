/**
 * Native plumbing of jdlpack, shared by its modules and exported to them only: the restricted FFM
 * calls, the C allocator, counters, diagnostics and the leak safety net. Not an API.
 */
package org.jdlpack.abi.internal;
