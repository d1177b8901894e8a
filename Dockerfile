# EcoLens web app.
#   Build:  docker build -t ecolens .                       (add --build-arg WITH_LLAMA=1 for llm='llama_cpp')
#   Run:    docker run -p 7860:7860 -v ecolens-data:/data ecolens
#   GPU:    docker run --gpus all -e ECOLENS_DEVICE=cuda -p 7860:7860 -v ecolens-data:/data ecolens
#   A command instead of the web app: docker run -v ecolens-data:/data ecolens search "a frog calling"

# --- build stage: the virtual environment (and, if asked, the llama-cpp-python wheel, which needs compilers)
FROM python:3.11-slim AS build
ARG WITH_LLAMA=0
RUN apt-get update \
    && if [ "$WITH_LLAMA" = 1 ]; then apt-get install -y --no-install-recommends build-essential cmake git; fi \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY requirements.txt requirements-llama.txt requirements-dev.txt ./
COPY scripts/setup.sh scripts/setup.sh
RUN ECOLENS_SETUP_VENV=/opt/venv ECOLENS_SETUP_CACHE=/tmp/ecolens-setup ECOLENS_SETUP_LLAMA="$WITH_LLAMA" \
        bash scripts/setup.sh \
    && rm -rf /tmp/ecolens-setup /root/.cache/pip

# --- run stage: no compilers; tini as PID 1 forwards docker stop's SIGTERM so python exits cleanly
FROM python:3.11-slim
# nginx: the reverse proxy of `python app.py serve --processes N` (docs/deployment.md)
RUN apt-get update && apt-get install -y --no-install-recommends tini nginx \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 ecolens \
    && mkdir -p /data && chown ecolens /data
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY . .
# Leaflet for the Filters map is committed (assets/vendor/leaflet); the build stops if a file differs from it
RUN /opt/venv/bin/python scripts/fetch_leaflet.py
# Everything that must survive a restart lives on the volume: catalog, index, caches, session log, and the
# Hugging Face model downloads (HF_HOME).
ENV ECOLENS_DATA_DIR=/data ECOLENS_HOST=0.0.0.0 ECOLENS_PORT=7860 HF_HOME=/data/huggingface \
    PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1
USER ecolens
VOLUME ["/data"]
EXPOSE 7860
# The first start builds the demo world (about a minute), hence the long start period.
HEALTHCHECK --interval=30s --timeout=10s --start-period=300s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/' % os.environ.get('ECOLENS_PORT', '7860'), timeout=8)"]
ENTRYPOINT ["/usr/bin/tini", "--", "python", "app.py"]
CMD []
