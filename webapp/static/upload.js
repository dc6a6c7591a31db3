// Choose, drop or shoot a photo, shrink it in the browser, post it as a multipart JPEG.
// On the start page (form, drop zone, camera, gallery), and on a result page as "New photo" and as
// the second photo of the same table (posted to the analysis's second-photo API).
"use strict";
(() => {
  const MAX_SIDE = 2000;          // longer side sent to the server, in pixels
  const KEEP_BELOW_BYTES = 4e6;   // a JPEG this small and not too big in pixels is sent as it is
  const $ = (id) => document.getElementById(id);
  const form = $("upload-form");
  const input = $("photo-input");
  const message = $("message");

  function showError(text) {
    message.textContent = text;
    message.hidden = false;
    message.scrollIntoView({block: "nearest"});
    $("progress-box").hidden = true;
  }

  function progress(percent, text) {
    $("progress-box").hidden = false;
    const bar = $("progress");
    if (percent === null) bar.removeAttribute("value"); else bar.value = percent;
    $("progress-text").textContent = text;
  }

  function canvasToJpeg(canvas) {
    return new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.9));
  }

  // Shrinks big photos (orientation applied by the browser); anything it cannot decode is sent
  // unchanged, so the server's clear error message reaches the user.
  async function shrink(file) {
    let bitmap;
    try {
      bitmap = await createImageBitmap(file, {imageOrientation: "from-image"});
    } catch (err) {
      return file;
    }
    const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
    if (scale === 1 && file.type === "image/jpeg" && file.size < KEEP_BELOW_BYTES) return file;
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(bitmap.width * scale);
    canvas.height = Math.round(bitmap.height * scale);
    canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    bitmap.close();
    return (await canvasToJpeg(canvas)) || file;
  }

  function send(blob, url = "/api/analyze") {
    message.hidden = true;
    const data = new FormData();
    data.append("photo", blob, blob.name || "photo.jpg");
    data.append("to_move", $("to-move") ? $("to-move").value : "unknown");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.responseType = "json";
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) {
        progress(Math.round(100 * event.loaded / event.total),
                 `Uploading… ${Math.round(event.loaded / 1024)} of ${Math.round(event.total / 1024)} kB`);
      }
    };
    xhr.upload.onload = () => progress(null, "Reading the photo…");
    xhr.onload = () => {
      const body = xhr.response || {};
      if ((xhr.status === 200 || body.code === "impossible_reading") && body.id) {
        progress(100, "Done: opening the answer…");
        window.location.assign(`/a/${body.id}`);
      } else {
        showError(body.error || `The server answered ${xhr.status}.`);
      }
    };
    xhr.onerror = () => showError("The server could not be reached. Is it still running?");
    progress(0, "Uploading…");
    // the result page reports the time from here to its answer drawn (upload included)
    sessionStorage.setItem("exxit-upload-start", String(Date.now()));
    xhr.send(data);
  }

  async function handle(file, url) {
    if (!file) return;
    progress(null, "Preparing the photo…");
    send(await shrink(file), url);
  }

  input.addEventListener("change", () => handle(input.files[0]));
  const secondForm = $("second-photo-form");
  if (secondForm) {
    secondForm.addEventListener("submit", (event) => {
      event.preventDefault();
      handle($("second-photo-input").files[0], secondForm.dataset.api);
    });
  }
  if (!form) return;      // a result page has only the "New photo" input
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.files[0]) handle(input.files[0]); else showError("Choose a photo first.");
  });

  const zone = $("dropzone");
  ["dragenter", "dragover"].forEach((type) => zone.addEventListener(type, (event) => {
    event.preventDefault();
    zone.classList.add("over");
  }));
  ["dragleave", "drop"].forEach((type) => zone.addEventListener(type, () => zone.classList.remove("over")));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    handle(event.dataTransfer.files[0]);
  });

  document.querySelectorAll(".sample-form").forEach((sampleForm) => {
    sampleForm.addEventListener("submit", () => {
      sampleForm.elements.to_move.value = $("to-move").value;   // the side chosen above the gallery
      sessionStorage.setItem("exxit-upload-start", String(Date.now()));
      progress(null, "Reading the sample photo…");
    });
  });

  // Camera: a live preview of the rear camera and one still taken from it.
  let stream = null;
  function closeCamera() {
    if (stream) stream.getTracks().forEach((track) => track.stop());
    stream = null;
    $("camera").hidden = true;
  }
  // Frames of the shape the server's camera file (python -m webapp --camera) was measured on, if
  // it has one: its lens fits only photos of that shape.
  function frameRequest() {
    const measured = $("camera").dataset;
    const width = measured.width ? Number(measured.width) : 1920;
    const height = measured.height ? Number(measured.height) : 1440;
    return {facingMode: {ideal: "environment"}, width: {ideal: width}, height: {ideal: height},
            aspectRatio: {ideal: width / height}};
  }
  $("camera-button").addEventListener("click", async () => {
    if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      showError("The live camera needs a secure page: start the server with --https, " +
                "or use 'Take or choose a photo', which opens the phone's camera.");
      return;
    }
    try {
      stream = await navigator.mediaDevices.getUserMedia({video: frameRequest(), audio: false});
    } catch (err) {
      showError(`The camera could not be opened (${err.name}). Use 'Take or choose a photo' instead.`);
      return;
    }
    const video = $("camera-video");
    video.srcObject = stream;
    $("camera").hidden = false;
    await video.play();
  });
  $("camera-close").addEventListener("click", closeCamera);
  $("camera-shoot").addEventListener("click", async () => {
    const video = $("camera-video");
    if (!video.videoWidth) return;
    const canvas = document.createElement("canvas");
    const scale = Math.min(1, MAX_SIDE / Math.max(video.videoWidth, video.videoHeight));
    canvas.width = Math.round(video.videoWidth * scale);
    canvas.height = Math.round(video.videoHeight * scale);
    canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
    closeCamera();
    send(await canvasToJpeg(canvas));
  });
})();
