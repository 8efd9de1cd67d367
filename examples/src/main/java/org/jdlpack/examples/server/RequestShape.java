package org.jdlpack.examples.server;

import java.util.List;
import java.util.regex.Pattern;

import com.sun.net.httpserver.Headers;

/**
 * What a {@code POST /classify} asks for, read strictly from its headers before a byte of the body:
 * the row count from {@code X-Shape: ROWS,16}, and how many body bytes that means.
 *
 * <p>{@code X-Shape} must be exactly one header whose value is a positive decimal without sign or
 * leading zeros, a comma and {@code 16}, nothing else ({@code 1,16,}, {@code 1, 16}, {@code 1 ,16},
 * {@code +1,16}, {@code 01,16} and two {@code X-Shape} headers are refused). Whitespace around the
 * whole value is not part of it in HTTP (RFC 9110, section 5.5), and the JDK's server strips it,
 * and a NUL or other control character at either end with it, before a handler sees the value:
 * {@code X-Shape:  1,16 } is the value {@code 1,16}. The body is either {@code Content-Length}
 * bytes, which must be what the shape needs, or chunked ({@code Transfer-Encoding: chunked}), read
 * up to what the shape needs and refused if it ends early or holds more.
 *
 * @param rows    the rows, 1 to {@link InferenceServer#MAX_ROWS}
 * @param chunked whether the body is chunked (its length is known only at its end)
 */
record RequestShape(int rows, boolean chunked) {

    private static final Pattern SHAPE = Pattern.compile("(0|[1-9][0-9]{0,9}),"
            + Classifier.FEATURES);

    /** {@return the bytes the body must hold: rows x 16 float32} */
    long bodyBytes() {
        return (long) rows * Classifier.FEATURES * Float.BYTES;
    }

    /**
     * Reads the shape from the request's headers.
     *
     * @param headers the request's headers
     * @return the shape
     * @throws Classifier.BadRequestException naming the header and its value, and saying what to send
     */
    static RequestShape of(Headers headers) {
        List<String> shapes = headers.get("X-Shape");
        if (shapes == null || shapes.isEmpty()) {
            throw new Classifier.BadRequestException("the X-Shape header is missing: send X-Shape: ROWS," + Classifier.FEATURES);
        }
        if (shapes.size() > 1) {
            throw new Classifier.BadRequestException("X-Shape is sent " + shapes.size() + " times (" + String.join(" and ", shapes)
                    + "); send it once: X-Shape: ROWS," + Classifier.FEATURES);
        }
        String shape = shapes.getFirst();
        if (!SHAPE.matcher(shape).matches()) {
            throw new Classifier.BadRequestException("X-Shape is " + printable(shape) + "; the model takes rows of "
                    + Classifier.FEATURES + " float32: send X-Shape: ROWS," + Classifier.FEATURES
                    + " (ROWS in decimal digits, no sign, spaces or leading zeros)");
        }
        long rows = Long.parseLong(shape.substring(0, shape.indexOf(',')));
        if (rows < 1 || rows > InferenceServer.MAX_ROWS) {
            throw new Classifier.BadRequestException("X-Shape asks for " + rows + " rows; send 1 to " + InferenceServer.MAX_ROWS);
        }
        RequestShape request = new RequestShape((int) rows, isChunked(headers));
        if (!request.chunked) {
            String length = headers.getFirst("Content-Length");
            if (length == null || !length.equals(Long.toString(request.bodyBytes()))) {
                throw new Classifier.BadRequestException("the body holds " + (length == null ? "an unknown number of" : length)
                        + " bytes; X-Shape " + shape + " needs " + request.bodyBytes() + " (little-endian float32)");
            }
        }
        return request;
    }

    private static boolean isChunked(Headers headers) {
        String encoding = headers.getFirst("Transfer-Encoding");
        return encoding != null && encoding.equalsIgnoreCase("chunked");
    }

    /** The value with control characters spelled out, so that a message shows what was sent. */
    private static String printable(String value) {
        StringBuilder out = new StringBuilder("'");
        value.chars().forEach(c -> out.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", c) : String.valueOf((char) c)));
        return out.append('\'').toString();
    }
}
