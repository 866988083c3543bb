from loopx_git.cli.main import run

run()
