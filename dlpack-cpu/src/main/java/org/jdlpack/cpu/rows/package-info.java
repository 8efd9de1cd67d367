/**
 * What dlpack-cpu's own packages share and no other module uses: {@link
 * org.jdlpack.cpu.rows.RowCursor}, the row-major walk behind the host copies (in {@code
 * org.jdlpack.cpu}) and the device transfer planner (in {@code org.jdlpack.cpu.internal}). Public
 * only so that both packages reach it; not exported (issue 43: nothing is exported without a user
 * outside the module).
 */
package org.jdlpack.cpu.rows;
