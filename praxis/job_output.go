package praxis

import "context"

type jobArgs struct {
	Job   jobRef `json:"job" jsonschema:"The job id bash returned."`
	Since *int64 `json:"since,omitempty" minimum:"0" jsonschema:"Output position to read from, as returned by the previous call (next). Default: where the previous job_output call stopped; 0 reads everything kept."`
}

func (e *Engine) jobOutput(ctx context.Context, a jobArgs) (jobInfo, error) {
	j, err := e.shell.job(string(a.Job))
	if err != nil {
		return jobInfo{}, err
	}
	return jobReport(j, a.Since, false), nil
}
