package catalogql

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Request bounds, as catalogd's: the body and the query in it.
const (
	MaxBodyBytes  = 1 << 20
	MaxQueryBytes = 100000
)

// HandlerOptions shape Handler.
type HandlerOptions struct {
	// Name, when set, is the only {catalog} path value answered; others
	// are 404 (once the query is known to be well formed, as on catalogd
	// for a catalog it does not hold).
	Name string
	// Concurrency is how many queries run at once (DefaultConcurrency
	// when 0); one more waits up to QueueWait for a turn, then is
	// answered 429 Too Many Requests with Retry-After.
	Concurrency int
	// QueueWait is how long a query waits for a turn (DefaultQueueWait
	// when 0).
	QueueWait time.Duration
}

// DefaultConcurrency is the queries answered at once by default: two for
// each CPU.
func DefaultConcurrency() int { return 2 * runtime.NumCPU() }

// DefaultQueueWait is how long a query waits for a turn by default.
const DefaultQueueWait = time.Second

// Handler answers POST {"query": "..."} with the query's result as JSON,
// checking the request in catalogd's order and with its statuses and
// messages: 405 for any other method, 400 for a bad catalog name, a body
// that is not a JSON object with a string query, an empty query or one
// over MaxQueryBytes. Variables and operationName are ignored, as catalogd
// ignores them. Mounted on a pattern with {catalog}, that path value is
// checked as catalogd checks it.
//
// Queries that pass those checks and catalogd's bounds run at most
// opts.Concurrency at once.
func Handler(s *Schema, opts HandlerOptions) http.Handler {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency()
	}
	if opts.QueueWait <= 0 {
		opts.QueueWait = DefaultQueueWait
	}
	turns := make(chan struct{}, opts.Concurrency)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		name := r.PathValue("catalog")
		named := r.Pattern != "" && strings.Contains(r.Pattern, "{catalog}")
		if named {
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				http.Error(w, "invalid catalog name: "+strings.Join(errs, "; "), http.StatusBadRequest)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		var params struct {
			Query string `json:"query"`
		}
		if err := json.NewDecoder(r.Body).Decode(&params); err != nil {
			http.Error(w, "Invalid request body", http.StatusBadRequest)
			return
		}
		switch {
		case params.Query == "":
			http.Error(w, "Query cannot be empty", http.StatusBadRequest)
			return
		case len(params.Query) > MaxQueryBytes:
			http.Error(w, "Query too large", http.StatusBadRequest)
			return
		}
		res := refused(params.Query)
		if res == nil {
			if named && opts.Name != "" && name != opts.Name {
				statusError(w, http.StatusNotFound) // no such catalog
				return
			}
			if !takeTurn(r.Context(), turns, opts.QueueWait) {
				w.Header().Set("Retry-After", "1")
				http.Error(w, fmt.Sprintf("%d %s: %d GraphQL queries are running (--http-graphql-concurrency); retry later", http.StatusTooManyRequests, http.StatusText(http.StatusTooManyRequests), opts.Concurrency), http.StatusTooManyRequests)
				return
			}
			// The turn is held until the answer is written: its memory is
			// the query's until then.
			defer func() { <-turns }()
			res = s.run(r.Context(), params.Query)
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(res); err != nil {
			statusError(w, http.StatusInternalServerError) // as catalogd: after a failed write too
		}
	})
}

// takeTurn waits up to wait for one of turns, false when none came (or
// the request ended).
func takeTurn(ctx context.Context, turns chan struct{}, wait time.Duration) bool {
	select {
	case turns <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case turns <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// statusError writes catalogd's error body: the code and its text.
func statusError(w http.ResponseWriter, code int) {
	http.Error(w, fmt.Sprintf("%d %s", code, http.StatusText(code)), code)
}
