package praxis

import "context"

type jobKillArgs struct {
	Job jobRef `json:"job" jsonschema:"The job id bash returned."`
}

func (e *Engine) jobKill(ctx context.Context, a jobKillArgs) (jobInfo, error) {
	j, err := e.shell.job(string(a.Job))
	if err != nil {
		return jobInfo{}, err
	}
	wasDone := isDone(j.proc)
	j.proc.Kill()
	select {
	case <-j.proc.Done():
	case <-ctx.Done():
		return jobInfo{}, Errorf(ECancelled, "job_kill cancelled while job %s was ending", j.id)
	}
	return jobReport(j, nil, !wasDone), nil
}
