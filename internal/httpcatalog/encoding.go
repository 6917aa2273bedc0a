package httpcatalog

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Content codings catalogd's compression middleware (klauspost/compress's
// gzhttp, default settings) answers with.
const (
	codingGzip = "gzip"
	codingZstd = "zstd"
)

// negotiate picks the content coding of a response as catalogd does: only
// the codings gzip and zstd count, named exactly (any case; "x-gzip" and
// "*" are neither); each takes the quality of its first mention (1 when
// none is given, 0 when it does not parse, clamped to [0, 1]); the higher
// quality wins and zstd wins a tie ("gzip;q=NaN, zstd" too); HEAD is never compressed. "" is
// identity.
func negotiate(r *http.Request) string {
	if r.Method == http.MethodHead {
		return ""
	}
	ae := r.Header.Get("Accept-Encoding")
	if ae == "" {
		return ""
	}
	// The comparisons are gzhttp's, in its order, so that even a quality
	// of NaN chooses as it does.
	gz, zs := codingQuality(ae, codingGzip), codingQuality(ae, codingZstd)
	switch {
	case gz <= 0 && zs <= 0:
		return ""
	case zs <= 0:
		if gz > 0 {
			return codingGzip
		}
		return ""
	case gz <= 0:
		if zs > 0 {
			return codingZstd
		}
		return ""
	case gz > zs:
		return codingGzip
	}
	return codingZstd
}

// codingQuality is the quality an Accept-Encoding header gives coding at
// its first mention, 0 when it has none.
func codingQuality(header, coding string) float64 {
	for _, part := range strings.Split(strings.TrimSpace(header), ",") {
		name, params, hasParams := strings.Cut(part, ";")
		if strings.ToLower(strings.TrimSpace(name)) != coding {
			continue
		}
		q := 1.0
		if !hasParams {
			return q
		}
		for _, p := range strings.Split(params, ";") {
			p = strings.TrimSpace(p)
			if len(p) >= 2 && strings.EqualFold(p[:2], "q=") {
				q, _ = strconv.ParseFloat(p[2:], 64) // 0 when it does not parse
				q = min(max(q, 0), 1)
			}
		}
		return q
	}
	return 0
}

// zstdEncoder is the zstd encoder of every response: at its fastest, with
// a 128 KiB window, as catalogd's middleware writes zstd. Its EncodeAll is
// safe for concurrent use; it holds at most DefaultGzipEncoders states.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	z, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(DefaultGzipEncoders),
		zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(128<<10)) // constant, valid options
	return z
})
