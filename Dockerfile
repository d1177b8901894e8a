# EcoLens web app. Build: docker build -t ecolens .   Run: docker run -p 7860:7860 -v ecolens-data:/data ecolens
FROM python:3.11-slim

# Compilers for the llama-cpp-python source build (portable AVX2 flags, see scripts/setup.sh)
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake git \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 ecolens
WORKDIR /app
COPY requirements.txt scripts/setup.sh ./scripts/
RUN mv scripts/requirements.txt . && chown -R ecolens /app
USER ecolens
ENV ECOLENS_VENV=/home/ecolens/venv ECOLENS_CACHE=/home/ecolens/.cache/ecolens
RUN bash scripts/setup.sh

COPY --chown=ecolens . .
# The data directory (catalog, index, caches, session log) lives on a volume so it survives restarts.
ENV ECOLENS_DATA_DIR=/data ECOLENS_HOST=0.0.0.0 ECOLENS_PORT=7860
USER root
RUN mkdir -p /data && chown ecolens /data
USER ecolens
VOLUME ["/data"]
EXPOSE 7860
CMD ["/home/ecolens/venv/bin/python", "app.py"]
