#include "sim/shrink/isolated_run.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sluice::sim {
namespace {

RunOutcome outcome_of(const RunResult& r) {
  RunOutcome outcome;
  for (const Violation& v : r.report.violations) outcome.violated.push_back(v.invariant);
  outcome.operations = r.operations;
  outcome.faults_applied = r.faults_applied;
  return outcome;
}

// The child's answer on the pipe: operations and faults on the first line, then one invariant a line.
std::string encode(const RunOutcome& outcome) {
  std::string text = std::to_string(outcome.operations) + " " + std::to_string(outcome.faults_applied) + "\n";
  for (const std::string& invariant : outcome.violated) text += invariant + "\n";
  return text;
}

RunOutcome decode(const std::string& text) {
  RunOutcome outcome;
  std::istringstream in(text);
  in >> outcome.operations >> outcome.faults_applied;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) outcome.violated.push_back(line);
  return outcome;
}

}  // namespace

bool RunOutcome::fails_with(const std::string& invariant) const {
  return std::find(violated.begin(), violated.end(), invariant) != violated.end();
}

RunOutcome run_isolated(const Scenario& scenario, const RunOptions& options) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return outcome_of(run_scenario(scenario, options));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = fork();
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return outcome_of(run_scenario(scenario, options));
  }
  if (child == 0) {
    close(pipe_fds[0]);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);  // an assertion's report: the parent names the failure
    const std::string answer = encode(outcome_of(run_scenario(scenario, options)));
    for (size_t sent = 0; sent < answer.size();) {
      const ssize_t n = write(pipe_fds[1], answer.data() + sent, answer.size() - sent);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    _exit(0);  // no atexit handlers, no sanitizer leak report: the parent owns everything the child inherited
  }
  close(pipe_fds[1]);
  std::string answer;
  char buffer[256];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) answer.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0) || answer.empty()) {
    RunOutcome died;
    died.violated.emplace_back(kCoreAssertion);
    return died;
  }
  return decode(answer);
}

}  // namespace sluice::sim
