package judge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// maxAnswerBytes bounds an answer body; a verdict list is a few kilobytes.
const maxAnswerBytes = 4 << 20

// exchange records the raw request and answer of one judgment. go-openai
// gives back decoded structs only, and a judgment is audited from the raw
// bodies.
type exchange struct {
	request  []byte
	response []byte
	status   int
}

type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// doer is the HTTP client go-openai is given: it retries 429, 5xx and
// network errors with thirdparty.Retry (Retry-After honoured), and records
// the bodies of the exchange named by the request's context. An endpoint
// that does not resolve or refuses is not retried: Retry.Do remembers it
// (thirdparty.Reachability) and the next judgments within the window are
// unavailable at once, with nothing sent.
type doer struct {
	hc    *http.Client
	retry thirdparty.Retry
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("judge: read request: %w", err)
		}
		body = b
	}
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	if ex != nil {
		ex.request = body
	}
	resp, err := d.retry.Do(ctx, d.hc, func(ctx context.Context) (*http.Request, error) {
		r := req.Clone(ctx)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: read answer: %v", thirdparty.ErrUnavailable, err)
	}
	if len(b) > maxAnswerBytes {
		return nil, fmt.Errorf("%w: answer larger than %d bytes", ErrBadAnswer, maxAnswerBytes)
	}
	if ex != nil {
		ex.response, ex.status = b, resp.StatusCode
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}
