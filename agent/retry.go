package agent

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how long to wait before trying a model
// call again after a rate limit, an overload, a server error or a network
// failure.
type RetryPolicy struct {
	// MaxAttempts is the number of tries in all, the first included.
	// Default 5.
	MaxAttempts int
	// BaseDelay is the wait before the second try; each further wait
	// doubles, up to MaxDelay. Defaults 1s and 30s. The wait is drawn at
	// random between half and all of that (jitter), so that many clients do
	// not retry in step.
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps a wait the API asks for with Retry-After; a longer
	// request ends the retries. Default 2 minutes.
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 2 * time.Minute
	}
	return p
}

// delay is the wait before try number attempt+1 (attempt counts from 1),
// honouring the API's Retry-After when it gave one. ok is false when the API
// asks for a wait longer than MaxRetryAfter.
func (p RetryPolicy) delay(attempt int, retryAfter time.Duration) (d time.Duration, ok bool) {
	if retryAfter > 0 {
		return retryAfter, retryAfter <= p.MaxRetryAfter
	}
	d = p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	return d/2 + rand.N(d/2+1), true
}

// RetryInfo describes a retry about to happen.
type RetryInfo struct {
	// Attempt is the try that failed, from 1.
	Attempt int
	Err     *APIError
	Wait    time.Duration
}

type retryObserverKey struct{}

// withRetryObserver returns a context whose model calls report their
// retries to fn, as well as to the onRetry of WithRetry.
func withRetryObserver(ctx context.Context, fn func(RetryInfo)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, fn)
}

// WithRetry returns a Provider that retries p's failed calls by policy.
// Only retryable failures are retried, and only when no text of the failed
// try was streamed yet (a retry would repeat it); a stalled stream is the
// exception, retried even after some text, since the alternative is to
// lose the reply (the retry event tells readers that the text starts
// over). onRetry, if not nil, is told about each retry before its wait; so
// is the agent loop, which reports retries as events. The usage of failed
// tries is added to the usage of the call's final reply or error.
func WithRetry(p Provider, policy RetryPolicy, onRetry func(RetryInfo)) Provider {
	return &retrying{p: p, policy: policy.withDefaults(), onRetry: onRetry}
}

type retrying struct {
	p       Provider
	policy  RetryPolicy
	onRetry func(RetryInfo)
}

func (r *retrying) Name() string { return r.p.Name() }

func (r *retrying) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	var spent Usage // the usage of the failed tries
	for attempt := 1; ; attempt++ {
		streamed := false
		resp, err := r.p.Complete(ctx, req, func(s string) {
			streamed = true
			if onText != nil {
				onText(s)
			}
		})
		if err == nil {
			resp.Usage = resp.Usage.Add(spent)
			return resp, nil
		}
		var ae *APIError
		if !errors.As(err, &ae) {
			return resp, err
		}
		ae.Usage = ae.Usage.Add(spent)
		if (streamed && ae.Kind != ErrStalled) || attempt >= r.policy.MaxAttempts || ctx.Err() != nil || !ae.Retryable() {
			return resp, err
		}
		wait, ok := r.policy.delay(attempt, ae.RetryAfter)
		if !ok {
			return resp, err
		}
		spent = ae.Usage
		ri := RetryInfo{Attempt: attempt, Err: ae, Wait: wait}
		if r.onRetry != nil {
			r.onRetry(ri)
		}
		if fn, ok := ctx.Value(retryObserverKey{}).(func(RetryInfo)); ok {
			fn(ri)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(ctx.Err(), ae)
		case <-t.C:
		}
	}
}
