//! gzip for the portal's own answers, a whole body at a time with a compressor each thread
//! keeps.
//!
//! The portal builds its pages and API answers whole before sending them: pages render with
//! `SsrMode::Async` from the catalog in memory, API answers are one JSON value, exports one
//! string. tower-http's `CompressionLayer` is made for bodies that stream: it feeds a body
//! through async-compression in 4 KB pieces with a new compressor for each response. For a
//! body that is already whole, this layer does the same work in one call to zlib-rs, with a
//! compressor that the thread keeps and resets between responses, and sends the result with
//! its `Content-Length`. A gzipped catalog page then costs ~6 % less server CPU and a 50-item
//! list ~9 % less, for the same bytes (ADR 0033, `docs/performance.md`).
//!
//! What it takes: a response to a request that accepts gzip, that tower-http's layer would
//! compress too ([`compressible`]: not an image, not an event stream, not gRPC), without a
//! `Content-Encoding` of its own, and whose body is at least [`COMPRESS_MIN_BYTES`] and at
//! most [`WHOLE_MAX_BYTES`]. A body that turns out longer, carries
//! trailers or fails while it is read goes on as it came, frame for frame: tower-http's layer
//! around this one then compresses it as a stream (the bundle without precompressed copies, a
//! large export), or passes the failure on.

use std::{cell::RefCell, collections::VecDeque, pin::Pin};

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::Request,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::Next,
    response::Response,
};
use flate2::{Compress, Compression, FlushCompress, Status};
use futures_util::{StreamExt, stream};
use http_body_util::{BodyStream, StreamBody};
use hyper::body::Frame;
use tower_http::compression::predicate::Predicate;

use super::middleware::{COMPRESS_MIN_BYTES, compressible};

/// Largest body compressed whole, in bytes. Compressing it takes about 1 ms at gzip's fastest
/// level; anything longer streams through tower-http's layer so that no one response holds a
/// worker thread for long.
pub(crate) const WHOLE_MAX_BYTES: usize = 1 << 20;

thread_local! {
    /// The thread's gzip compressor, at the fastest level with the full 32 KB window
    /// (zlib-rs's quick strategy needs both). Kept between responses: a new one would set up
    /// ~300 KB of tables each time.
    static GZIP: RefCell<Compress> =
        RefCell::new(Compress::new_gzip(Compression::fast(), 15));
}

/// The middleware: compresses a whole response body with gzip when the request accepts it and
/// the response is worth it.
pub(crate) async fn gzip_whole_bodies(request: Request, next: Next) -> Response {
    let accepts = accepts_gzip(request.headers());
    let response = next.run(request).await;
    if !accepts || !worth_compressing(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match read_whole(body).await {
        Whole::Body(bytes) => bytes,
        Whole::Not(body) => return Response::from_parts(parts, body),
    };
    if bytes.len() < usize::from(COMPRESS_MIN_BYTES) {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let Some(gzipped) = GZIP.with(|compressor| gzip(&mut compressor.borrow_mut(), &bytes)) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    let varies = parts.headers.get_all(header::VARY).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|name| name.trim().eq_ignore_ascii_case("accept-encoding"))
        })
    });
    if !varies {
        parts
            .headers
            .append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    Response::from_parts(parts, Body::from(gzipped))
}

/// Whether `Accept-Encoding` lets the response be gzipped, read the way tower-http's layer
/// reads it so that the two agree: `gzip` (or `x-gzip`) named with a weight above zero, and
/// not below `identity`'s when that is named too; `*` is not read, and an entry whose weight
/// is not a valid one is skipped.
pub(crate) fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut gzip = None;
    let mut identity = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for entry in value.split(',') {
            let mut fields = entry.split(';').map(str::trim);
            let coding = fields.next().unwrap_or_default();
            let weight = fields
                .find_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
                .map_or(Some(1000), weight);
            let Some(weight) = weight else { continue };
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                gzip = gzip.max(Some(weight));
            } else if coding.eq_ignore_ascii_case("identity") {
                identity = identity.max(Some(weight));
            }
        }
    }
    gzip.is_some_and(|g| g > 0 && identity.is_none_or(|i| g >= i))
}

/// A weight (`q=` value, RFC 9110 §12.4.2: `0`, `1` or either with up to three decimals) in
/// thousandths, or `None` when it is not one.
fn weight(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut thousandths = 0;
    for (digit, scale) in fraction.bytes().zip([100, 10, 1]) {
        thousandths += u16::from(digit - b'0') * scale;
    }
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// Whether the response may be gzipped at all: no encoding of its own, a status that has a
/// body, and what tower-http's layer would take ([`compressible`]).
fn worth_compressing(response: &Response) -> bool {
    let status = response.status();
    let headers = response.headers();
    !(status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
        || headers.contains_key(header::CONTENT_ENCODING)
        || headers.contains_key(header::CONTENT_RANGE))
        && compressible().should_compress(response)
}

/// A body read to its end, or given back as it came (the same frames in the same order) when
/// it is longer than [`WHOLE_MAX_BYTES`], carries trailers or fails while it is read.
enum Whole {
    Body(Bytes),
    Not(Body),
}

async fn read_whole(mut body: Body) -> Whole {
    if body.size_hint().lower() > WHOLE_MAX_BYTES as u64 {
        return Whole::Not(body);
    }
    let mut chunks: VecDeque<Bytes> = VecDeque::new();
    let mut length = 0;
    loop {
        match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            None => break,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => {
                    length += data.len();
                    chunks.push_back(data);
                    if length > WHOLE_MAX_BYTES {
                        return Whole::Not(resume(chunks, None, body));
                    }
                }
                Err(trailers) => return Whole::Not(resume(chunks, Some(Ok(trailers)), body)),
            },
            Some(Err(error)) => return Whole::Not(resume(chunks, Some(Err(error)), Body::empty())),
        }
    }
    Whole::Body(match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.pop_front().unwrap_or_default(),
        _ => {
            let mut whole = Vec::with_capacity(length);
            for chunk in chunks {
                whole.extend_from_slice(&chunk);
            }
            whole.into()
        }
    })
}

/// The data already read, then the frame (or failure) that stopped the reading, then the rest
/// of the body.
fn resume(
    read: VecDeque<Bytes>,
    stopped_at: Option<Result<Frame<Bytes>, axum::Error>>,
    rest: Body,
) -> Body {
    let read = stream::iter(read.into_iter().map(|data| Ok(Frame::data(data))));
    let frames = read
        .chain(stream::iter(stopped_at))
        .chain(BodyStream::new(rest));
    Body::new(StreamBody::new(frames))
}

/// `bytes` as one gzip stream, with `compressor` reset first; `None` if zlib-rs reports an
/// error (it does so only for a misused stream), and the body then goes out as it is.
fn gzip(compressor: &mut Compress, bytes: &[u8]) -> Option<Vec<u8>> {
    compressor.reset();
    // A page or a JSON list shrinks 7 to 14 times: a quarter is room enough in one call.
    let mut out = Vec::with_capacity(bytes.len() / 4 + 64);
    loop {
        let read = usize::try_from(compressor.total_in()).ok()?;
        match compressor.compress_vec(bytes.get(read..)?, &mut out, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => return Some(out),
            Ok(_) => out.reserve(out.capacity().max(64)),
            Err(error) => {
                tracing::warn!(%error, "gzip failed; the response goes out uncompressed");
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use axum::{Router, body::to_bytes, routing};
    use tower::ServiceExt;

    use super::*;

    /// A router whose `/body` answers `body` as `content_type`, behind this layer only.
    fn answering(content_type: &'static str, body: Body) -> Router {
        let body = std::sync::Arc::new(std::sync::Mutex::new(Some(body)));
        Router::new()
            .route(
                "/body",
                routing::get(move || {
                    let body = body.lock().unwrap().take().unwrap_or_default();
                    async move {
                        Response::builder()
                            .header(header::CONTENT_TYPE, content_type)
                            .body(body)
                            .unwrap()
                    }
                }),
            )
            .layer(axum::middleware::from_fn(gzip_whole_bodies))
    }

    /// The answer to `GET /body` asked with `Accept-Encoding: accept`.
    async fn get(router: Router, accept: &str) -> Response {
        router
            .oneshot(
                Request::get("/body")
                    .header(header::ACCEPT_ENCODING, accept)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap()
    }

    async fn get_body(router: Router, accept: &str) -> (axum::http::response::Parts, Bytes) {
        let response = get(router, accept).await;
        let (parts, body) = response.into_parts();
        (parts, to_bytes(body, usize::MAX).await.unwrap())
    }

    fn gunzip(bytes: &[u8]) -> String {
        let mut text = String::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_string(&mut text)
            .unwrap();
        text
    }

    fn page(n: usize) -> String {
        (0..n)
            .map(|i| format!("<tr><td>item {i}</td></tr>"))
            .collect()
    }

    #[tokio::test]
    async fn a_page_is_gzipped_whole_and_sent_with_its_length_and_vary() {
        let html = page(400);
        let router = answering("text/html; charset=utf-8", Body::from(html.clone()));

        let (parts, body) = get_body(router, "gzip, deflate, br").await;

        assert_eq!(parts.headers[header::CONTENT_ENCODING], "gzip");
        assert_eq!(
            parts.headers[header::CONTENT_LENGTH],
            body.len().to_string(),
            "sent whole, not chunked"
        );
        let vary: Vec<_> = parts.headers.get_all(header::VARY).iter().collect();
        assert_eq!(vary, ["accept-encoding"]);
        assert!(body.len() * 5 < html.len(), "{} bytes", body.len());
        assert_eq!(gunzip(&body), html);
    }

    #[tokio::test]
    async fn a_body_in_pieces_is_gathered_and_the_kept_compressor_starts_afresh_each_time() {
        // One thread: both responses use the same kept compressor.
        for round in 0..3 {
            let html = page(100 + round * 50);
            let pieces: Vec<Result<String, std::io::Error>> = html
                .as_bytes()
                .chunks(700)
                .map(|c| Ok(String::from_utf8(c.to_vec()).unwrap()))
                .collect();
            let router = answering("text/html", Body::from_stream(stream::iter(pieces)));

            let (parts, body) = get_body(router, "gzip").await;

            assert_eq!(parts.headers[header::CONTENT_ENCODING], "gzip");
            assert_eq!(gunzip(&body), html, "round {round}");
        }
    }

    #[tokio::test]
    async fn what_is_short_an_image_or_already_encoded_goes_on_as_it_came() {
        for (content_type, body) in [
            ("application/json", "[1,2,3]".to_owned()),
            ("image/png", page(200)),
        ] {
            let router = answering(content_type, Body::from(body.clone()));
            let (parts, sent) = get_body(router, "gzip").await;
            assert_eq!(
                parts.headers.get(header::CONTENT_ENCODING),
                None,
                "{content_type}"
            );
            assert_eq!(sent, body.as_bytes());
        }

        let encoded = Router::new()
            .route(
                "/body",
                routing::get(|| async {
                    (
                        [(header::CONTENT_ENCODING, "br")],
                        "already brotli ".repeat(200),
                    )
                }),
            )
            .layer(axum::middleware::from_fn(gzip_whole_bodies));
        let (parts, sent) = get_body(encoded, "gzip, br").await;
        assert_eq!(parts.headers[header::CONTENT_ENCODING], "br");
        assert_eq!(sent, "already brotli ".repeat(200).as_bytes());
    }

    #[tokio::test]
    async fn without_gzip_in_accept_encoding_nothing_is_compressed() {
        for accept in ["", "br", "gzip;q=0", "identity, gzip;q=0.5"] {
            let router = answering("application/json", Body::from(page(200)));
            let (parts, sent) = get_body(router, accept).await;
            assert_eq!(
                parts.headers.get(header::CONTENT_ENCODING),
                None,
                "{accept:?}"
            );
            assert_eq!(sent, page(200).as_bytes());
        }
    }

    #[tokio::test]
    async fn a_body_longer_than_the_limit_goes_on_whole_and_uncompressed_in_its_pieces() {
        let piece = "x".repeat(64 * 1024);
        let count = WHOLE_MAX_BYTES / piece.len() + 2;
        let pieces: Vec<Result<String, std::io::Error>> =
            (0..count).map(|_| Ok(piece.clone())).collect();
        let router = answering("text/plain", Body::from_stream(stream::iter(pieces)));

        let (parts, sent) = get_body(router, "gzip").await;

        assert_eq!(parts.headers.get(header::CONTENT_ENCODING), None);
        assert_eq!(sent.len(), count * piece.len(), "nothing lost");
        assert!(sent.iter().all(|&b| b == b'x'));
    }

    #[tokio::test]
    async fn a_body_that_fails_while_read_passes_its_data_then_its_failure_on() {
        let pieces: Vec<Result<String, std::io::Error>> = vec![
            Ok("first part ".repeat(200)),
            Err(std::io::Error::other("the database went away")),
        ];
        let router = answering("text/html", Body::from_stream(stream::iter(pieces)));
        let response = get(router, "gzip").await;
        assert_eq!(response.headers().get(header::CONTENT_ENCODING), None);
        let mut body = response.into_body();
        let first = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx))
            .await
            .unwrap()
            .unwrap()
            .into_data()
            .unwrap();
        assert_eq!(first, "first part ".repeat(200).as_bytes());
        let failure = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx))
            .await
            .unwrap();
        assert!(
            failure
                .unwrap_err()
                .to_string()
                .contains("the database went away")
        );
    }

    #[tokio::test]
    async fn a_body_with_trailers_goes_on_with_its_data_and_trailers() {
        use http_body_util::BodyExt;

        let mut trailers = HeaderMap::new();
        trailers.insert("x-checksum", HeaderValue::from_static("abc"));
        let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = vec![
            Ok(Frame::data(Bytes::from(
                "data before the trailers ".repeat(100),
            ))),
            Ok(Frame::trailers(trailers.clone())),
        ];
        let router = answering(
            "text/plain",
            Body::new(StreamBody::new(stream::iter(frames))),
        );
        let response = get(router, "gzip").await;

        assert_eq!(response.headers().get(header::CONTENT_ENCODING), None);
        let collected = response.into_body().collect().await.unwrap();
        assert_eq!(collected.trailers(), Some(&trailers));
        assert_eq!(
            collected.to_bytes(),
            "data before the trailers ".repeat(100).as_bytes()
        );
    }

    #[test]
    fn accept_encoding_is_read_with_its_weights() {
        let accepts = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            accepts_gzip(&headers)
        };
        for yes in [
            "gzip",
            "gzip, deflate, br, zstd",
            "x-gzip",
            "GZIP;Q=0.1",
            "br;q=1.0, gzip;q=0.8",
            "gzip, identity",
            "identity;q=0.5, gzip;q=0.5",
            "gzip;q=0.001",
        ] {
            assert!(accepts(yes), "{yes:?}");
        }
        for no in [
            "",
            "br",
            "*",
            "gzip;q=0",
            "gzip;q=0.000",
            "identity, gzip;q=0.5",
            "gzip;q=1.5",
            "gzip;q=0.0001",
            "gzip;q=",
            "gzip;q=.5",
        ] {
            assert!(!accepts(no), "{no:?}");
        }
        assert!(!accepts_gzip(&HeaderMap::new()), "no header");
    }
}
