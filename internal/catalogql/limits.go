package catalogql

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMemoryBudget is what one query may use, as counted by a query's
// budget: three times the JSON of every object it reads (the bytes, and
// the maps they decode to) and, for every value it answers, its length and
// 64 bytes (the result's maps and the response's encoding). A query that
// would count more is refused with an error and no data. Measured heap
// peaks stay within about twice the count (docs/olmv1.md).
const DefaultMemoryBudget = 64 << 20

// Per-object and per-value charges of the budget.
const (
	readFactor = 3
	valueCost  = 64
)

// Limits bound the queries of a Schema.
type Limits struct {
	// Timeout ends a query's work (QueryTimeout when 0).
	Timeout time.Duration
	// Memory is the budget of one query (DefaultMemoryBudget when 0).
	Memory int64
}

// SetLimits sets the bounds of the queries s answers from now on.
func (s *Schema) SetLimits(l Limits) {
	if l.Timeout <= 0 {
		l.Timeout = QueryTimeout
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemoryBudget
	}
	s.limits = l
}

// ErrOverBudget is why a query over its memory budget was stopped.
var ErrOverBudget = errors.New("query over budget")

// query is the state one query's resolvers share: once stopped (its
// context ended, or its budget ran out), every resolver answers nothing at
// once, so that graphql-go's executor, which runs on after Do has given up
// on it, finishes within moments.
type query struct {
	left    atomic.Int64
	stopped atomic.Bool
	mu      sync.Mutex
	why     error
}

type queryKey struct{}

func (q *query) stop(why error) {
	q.mu.Lock()
	if q.why == nil {
		q.why = why
	}
	q.mu.Unlock()
	q.stopped.Store(true)
}

func (q *query) reason() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.why
}

// queryOf is the state of the query ctx belongs to (nil outside one).
func queryOf(ctx context.Context) *query {
	if ctx == nil {
		return nil
	}
	q, _ := ctx.Value(queryKey{}).(*query)
	return q
}

// charge takes n bytes from the query's budget: false when the query is
// stopped or the budget has run out (which stops it).
func (q *query) charge(n int64) bool {
	if q == nil {
		return true
	}
	if q.stopped.Load() {
		return false
	}
	if q.left.Add(-n) < 0 {
		q.stop(ErrOverBudget)
		return false
	}
	return true
}

// overBudget is the error answered for a query stopped by its budget.
func overBudget(budget int64) error {
	return fmt.Errorf("query needs more than its memory budget of %d MiB (counted over the objects it reads and the values it answers): ask for fewer objects (limit), fields or aliases", budget>>20)
}
