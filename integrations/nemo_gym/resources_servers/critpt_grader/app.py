"""NeMo Gym starts this file (``entrypoint: app.py``) from ``resources_servers/critpt_grader``."""

from critpt_grader.server.gym import CritPtGraderResourcesServer

if __name__ == "__main__":
    CritPtGraderResourcesServer.run_webserver()
